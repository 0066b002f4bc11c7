import { defineScreen } from '../define';

export default defineScreen({
  id: 'smtp',
  paths: ['/settings/smtp'],
  title: 'smtp.title',
  nav: { section: 'system', order: 86, icon: 'mail' },
  adminOnly: true,
  load: () => import('./SmtpScreen'),
});
