import { defineScreen } from '../define';

export default defineScreen({
  id: 'users',
  paths: ['/users'],
  title: 'users.title',
  nav: { section: 'system', order: 65, icon: 'users' },
  viewRole: 'viewer',
  load: () => import('./UsersScreen'),
});
