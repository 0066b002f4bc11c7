import { defineDict } from '../../i18n/define';

export default defineDict('dashboard', {
  en: {
    title: 'Dashboard', peers: 'Peers', peersOnline: '{online} of {total} online', routes: 'Active routes', monitoring: 'Monitoring',
    monitoringUpDown: '{up} up, {down} down', trafficToday: 'Traffic today', upload: 'Upload', download: 'Download',
    wireguard: 'WireGuard', running: 'running', stopped: 'stopped',
  },
  de: {
    title: 'Dashboard', peers: 'Peers', peersOnline: '{online} von {total} online', routes: 'Aktive Routen', monitoring: 'Überwachung',
    monitoringUpDown: '{up} erreichbar, {down} gestört', trafficToday: 'Datenverkehr heute', upload: 'Upload', download: 'Download',
    wireguard: 'WireGuard', running: 'läuft', stopped: 'gestoppt',
  },
});
