import { defineScreen } from '../define';

// No navigation entry: the route screens link here (/routes/:id/auth).
export default defineScreen({
  id: 'routeauth',
  paths: ['/routes/:id/auth'],
  title: 'routeauth.title',
  writeRole: 'operator',
  load: () => import('./RouteAuthScreen'),
});
