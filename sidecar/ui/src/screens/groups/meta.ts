import { defineScreen } from '../define';

export default defineScreen({
  id: 'groups',
  paths: ['/groups'],
  title: 'groups.title',
  writeRole: 'operator',
  nav: { section: 'access', order: 25, icon: 'groups' },
  load: () => import('./GroupsScreen'),
});
