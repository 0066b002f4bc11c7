import { defineScreen } from '../define';

export default defineScreen({
  id: 'webhooks',
  paths: ['/webhooks', '/webhooks/:id'],
  title: 'webhooks.title',
  nav: { section: 'system', order: 75, icon: 'webhook' },
  load: () => import('./WebhooksScreen'),
});
