import { defineDict } from '../../i18n/define';

export default defineDict('dashboard', {
  en: {
    title: 'Dashboard', peers: 'Peers', peersOnline: '{online} of {total} online', showPeers: 'Show peers',
    routes: 'Active routes', showRoutes: 'Show routes', noRoutes: 'No active route yet.', addRoute: 'Create a route',
    monitoring: 'Monitoring', monitoringUpDown: '{up} up, {down} down', noMonitoring: 'No route is monitored. Turn on monitoring in a route to see it here.',
    trafficToday: 'Traffic today', upDownTotals: 'Upload {up} · Download {down}', liveRate: 'Live rate', upload: 'Upload', download: 'Download',
    noPeers: 'No peers yet', noPeersText: 'Add a first peer: its configuration file and QR code are shown right away.', addPeer: 'Add a peer',
    traffic: 'Traffic', period: 'Period', period1h: '1 hour', period24h: '24 hours', period7d: '7 days',
    periodTotals: 'Upload {up} · Download {down} in this period', noTraffic: 'No traffic in this period. It appears here once peers are connected.',
    chartLabel: 'Traffic chart, {period}',
    activity: 'Recent activity', allActivity: 'All activity', noActivity: 'Nothing has happened yet.',
    wireguard: 'WireGuard', caddy: 'Caddy', running: 'running', stopped: 'stopped', notManaged: 'not managed by Gatehouse',
    external: 'external Caddy (not started by Gatehouse)', renderOnly: 'no proxy: configuration only rendered',
    interface: 'Interface', mode: 'Mode', port: 'Port', lastPoll: 'Last poll', started: 'Started', lastLoad: 'Configuration loaded', lastError: 'Last error',
  },
  de: {
    title: 'Dashboard', peers: 'Peers', peersOnline: '{online} von {total} online', showPeers: 'Peers anzeigen',
    routes: 'Aktive Routen', showRoutes: 'Routen anzeigen', noRoutes: 'Noch keine aktive Route.', addRoute: 'Route anlegen',
    monitoring: 'Überwachung', monitoringUpDown: '{up} erreichbar, {down} gestört', noMonitoring: 'Keine Route wird überwacht. Schalten Sie die Überwachung in einer Route ein, um sie hier zu sehen.',
    trafficToday: 'Datenverkehr heute', upDownTotals: 'Upload {up} · Download {down}', liveRate: 'Aktuelle Rate', upload: 'Upload', download: 'Download',
    noPeers: 'Noch keine Peers', noPeersText: 'Legen Sie einen ersten Peer an: Konfigurationsdatei und QR-Code erscheinen sofort.', addPeer: 'Peer anlegen',
    traffic: 'Datenverkehr', period: 'Zeitraum', period1h: '1 Stunde', period24h: '24 Stunden', period7d: '7 Tage',
    periodTotals: 'Upload {up} · Download {down} in diesem Zeitraum', noTraffic: 'Kein Datenverkehr in diesem Zeitraum. Er erscheint hier, sobald Peers verbunden sind.',
    chartLabel: 'Diagramm des Datenverkehrs, {period}',
    activity: 'Letzte Aktivität', allActivity: 'Alle Aktivitäten', noActivity: 'Bisher ist nichts passiert.',
    wireguard: 'WireGuard', caddy: 'Caddy', running: 'läuft', stopped: 'gestoppt', notManaged: 'nicht von Gatehouse verwaltet',
    external: 'externes Caddy (nicht von Gatehouse gestartet)', renderOnly: 'kein Proxy: Konfiguration wird nur erzeugt',
    interface: 'Schnittstelle', mode: 'Modus', port: 'Port', lastPoll: 'Letzte Abfrage', started: 'Gestartet', lastLoad: 'Konfiguration geladen', lastError: 'Letzter Fehler',
  },
});
