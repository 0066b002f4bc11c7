import { defineScreen } from '../define';

export default defineScreen({
  id: 'rdp',
  // The fixed paths before /rdp/:id so "new" and "rotation" are never read as ids.
  paths: ['/rdp', '/rdp/new', '/rdp/rotation', '/rdp/:id', '/rdp/:id/edit'],
  title: 'rdp.title',
  writeRole: 'operator',
  // Right after the routes (30), before the gateways (40): RDP routes are the other route type.
  nav: { section: 'access', order: 32, icon: 'desktop' },
  load: () => import('./RdpScreen'),
});
