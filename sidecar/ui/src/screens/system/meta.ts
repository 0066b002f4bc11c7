import { defineScreen } from '../define';

export default defineScreen({
  id: 'system',
  paths: ['/system'],
  title: 'system.title',
  nav: { section: 'system', order: 80, icon: 'system' },
  viewRole: 'viewer',
  load: () => import('./SystemScreen'),
});
