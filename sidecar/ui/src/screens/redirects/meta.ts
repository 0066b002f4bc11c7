import { defineScreen } from '../define';

export default defineScreen({
  id: 'redirects',
  paths: ['/redirects'],
  title: 'redirects.title',
  nav: { section: 'access', order: 31, icon: 'redirect' },
  load: () => import('./RedirectsScreen'),
});
