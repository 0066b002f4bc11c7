import { defineScreen } from '../define';

export default defineScreen({
  id: 'dashboard',
  paths: ['/dashboard'],
  title: 'dashboard.title',
  nav: { section: 'main', order: 10, icon: 'dashboard' },
  load: () => import('./DashboardScreen'),
});
