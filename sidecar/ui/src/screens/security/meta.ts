import { defineScreen } from '../define';

export default defineScreen({
  id: 'security',
  paths: ['/settings/security'],
  title: 'security.title',
  nav: { section: 'system', order: 85, icon: 'shield' },
  viewRole: 'viewer',
  load: () => import('./SecurityScreen'),
});
