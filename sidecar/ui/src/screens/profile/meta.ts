import { defineScreen } from '../define';

export default defineScreen({
  id: 'profile',
  paths: ['/profile'],
  title: 'profile.title',
  writeRole: 'user',
  nav: { section: 'account', order: 90, icon: 'user' },
  load: () => import('./ProfileScreen'),
});
