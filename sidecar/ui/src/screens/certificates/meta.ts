import { defineScreen } from '../define';

export default defineScreen({
  id: 'certificates',
  paths: ['/certificates'],
  title: 'certificates.title',
  writeRole: 'operator',
  nav: { section: 'access', order: 31, icon: 'key' },
  load: () => import('./CertificatesScreen'),
});
