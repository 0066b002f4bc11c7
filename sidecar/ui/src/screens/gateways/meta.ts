import { defineScreen } from '../define';

export default defineScreen({
  id: 'gateways',
  paths: ['/gateways', '/gateways/:id'],
  title: 'gateways.title',
  writeRole: 'operator',
  nav: { section: 'access', order: 40, icon: 'gateway' },
  load: () => import('./GatewaysScreen'),
});
