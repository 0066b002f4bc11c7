import { defineScreen } from '../define';

export default defineScreen({
  id: 'routes',
  // /routes/new before /routes/:id so "new" is never read as an id.
  paths: ['/routes', '/routes/new', '/routes/:id', '/routes/:id/edit'],
  title: 'routes.title',
  writeRole: 'operator',
  nav: { section: 'access', order: 30, icon: 'routes' },
  load: () => import('./RoutesScreen'),
});
