import { defineScreen } from '../define';

export default defineScreen({
  id: 'peers',
  paths: ['/peers', '/peers/:id'],
  title: 'peers.title',
  writeRole: 'operator',
  nav: { section: 'access', order: 20, icon: 'peers' },
  load: () => import('./PeersScreen'),
});
