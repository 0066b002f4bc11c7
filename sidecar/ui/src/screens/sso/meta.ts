import { defineScreen } from '../define';

export default defineScreen({
  id: 'sso',
  paths: ['/settings/sso'],
  title: 'sso.title',
  nav: { section: 'system', order: 87, icon: 'key' },
  viewRole: 'viewer',
  load: () => import('./SsoScreen'),
});
