import { defineScreen } from '../define';

export default defineScreen({
  id: 'logs',
  paths: ['/logs'],
  title: 'logs.title',
  nav: { section: 'system', order: 70, icon: 'logs' },
  load: () => import('./LogsScreen'),
});
