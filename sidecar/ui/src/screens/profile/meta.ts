import { defineScreen } from '../define';

export default defineScreen({
  id: 'profile',
  paths: ['/profile'],
  title: 'profile.title',
  nav: { section: 'account', order: 90, icon: 'user' },
  load: () => import('./ProfileScreen'),
});
