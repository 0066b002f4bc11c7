import { defineScreen } from '../define';

export default defineScreen({
  id: 'backup',
  paths: ['/settings/backup'],
  title: 'backup.title',
  nav: { section: 'system', order: 84, icon: 'doc' },
  viewRole: 'viewer',
  load: () => import('./BackupScreen'),
});
