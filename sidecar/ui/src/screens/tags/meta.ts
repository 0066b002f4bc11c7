import { defineScreen } from '../define';

export default defineScreen({
  id: 'tags',
  paths: ['/tags'],
  title: 'tags.title',
  writeRole: 'operator',
  nav: { section: 'access', order: 26, icon: 'tag' },
  load: () => import('./TagsScreen'),
});
