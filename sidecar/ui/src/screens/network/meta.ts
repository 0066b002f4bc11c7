import { defineScreen } from '../define';

export default defineScreen({
  id: 'network',
  paths: ['/settings/network'],
  title: 'network.title',
  nav: { section: 'system', order: 83, icon: 'gateway' },
  viewRole: 'viewer',
  load: () => import('./NetworkScreen'),
});
