import { defineScreen } from '../define';

export default defineScreen({
  id: 'security',
  paths: ['/settings/security'],
  title: 'security.title',
  nav: { section: 'system', order: 85, icon: 'shield' },
  adminOnly: true,
  load: () => import('./SecurityScreen'),
});
