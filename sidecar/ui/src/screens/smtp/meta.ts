import { defineScreen } from '../define';

export default defineScreen({
  id: 'smtp',
  paths: ['/settings/smtp'],
  title: 'smtp.title',
  nav: { section: 'system', order: 86, icon: 'mail' },
  viewRole: 'viewer',
  load: () => import('./SmtpScreen'),
});
