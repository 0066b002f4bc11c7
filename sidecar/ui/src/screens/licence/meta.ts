import { defineScreen } from '../define';

export default defineScreen({
  id: 'licence',
  paths: ['/licence'],
  title: 'licence.title',
  nav: { section: 'system', order: 82, icon: 'licence' },
  load: () => import('./LicenceScreen'),
});
