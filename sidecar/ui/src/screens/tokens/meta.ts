import { defineScreen } from '../define';

export default defineScreen({
  id: 'tokens',
  paths: ['/tokens'],
  title: 'tokens.title',
  nav: { section: 'system', order: 60, icon: 'key' },
  viewRole: 'viewer',
  load: () => import('./TokensScreen'),
});
