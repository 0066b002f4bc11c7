import { defineDict } from '../../i18n/define';

export default defineDict('system', {
  en: {
    title: 'System', version: 'Version', app: 'Gatehouse', wireguard: 'WireGuard tunnel', caddy: 'Caddy reverse proxy',
    running: 'running', stopped: 'not running', notManaged: 'not managed here',
    wgNotManaged: 'This server does not manage a WireGuard interface (GATEHOUSE_WG_MANAGE=false): peers are stored and their configurations rendered, but no tunnel runs here, so it cannot be restarted.',
    caddyNotManaged: 'This server does not manage a Caddy process (GATEHOUSE_MANAGE_CADDY=false): the proxy configuration is rendered only. A reload renders it again from the database.',
    iface: 'Interface', mode: 'Mode', port: 'Listen port', publicKey: 'Public key', address: 'Address', subnet: 'Subnet', endpoint: 'Endpoint',
    peers: 'Peers on the interface', online: 'online', lastPoll: 'Last poll', lastSync: 'Last sync',
    restart: 'Restart WireGuard', restarting: 'Restarting…', restartConfirm: 'Restart the WireGuard interface? Every tunnel drops for a moment and comes back.',
    restarted: 'WireGuard restarted with {peers} peers in {ms} ms',
    reload: 'Reload configuration', reloading: 'Reloading…', reloaded: 'Configuration reloaded ({hash})', reloadedNoLoad: 'Configuration rendered ({hash}); nothing was loaded into a proxy',
    pid: 'Process', uptime: 'Running since', admin: 'Admin API', configHash: 'Configuration', lastLoad: 'Last load', lastError: 'Last error', restarts: 'Restarts',
    proxyMode: 'Proxy mode', mode_caddy: 'loads into Caddy', mode_render_only: 'render only', none: 'none', failed: 'Failed: {error}',
  },
  de: {
    title: 'System', version: 'Version', app: 'Gatehouse', wireguard: 'WireGuard-Tunnel', caddy: 'Caddy-Reverse-Proxy',
    running: 'läuft', stopped: 'läuft nicht', notManaged: 'nicht hier verwaltet',
    wgNotManaged: 'Dieser Server verwaltet keine WireGuard-Schnittstelle (GATEHOUSE_WG_MANAGE=false): Peers werden gespeichert und ihre Konfigurationen erzeugt, aber hier läuft kein Tunnel, daher lässt er sich nicht neu starten.',
    caddyNotManaged: 'Dieser Server verwaltet keinen Caddy-Prozess (GATEHOUSE_MANAGE_CADDY=false): die Proxy-Konfiguration wird nur erzeugt. Neu laden erzeugt sie erneut aus der Datenbank.',
    iface: 'Schnittstelle', mode: 'Modus', port: 'Port', publicKey: 'Öffentlicher Schlüssel', address: 'Adresse', subnet: 'Subnetz', endpoint: 'Endpunkt',
    peers: 'Peers an der Schnittstelle', online: 'online', lastPoll: 'Letzte Abfrage', lastSync: 'Letzter Abgleich',
    restart: 'WireGuard neu starten', restarting: 'Startet neu…', restartConfirm: 'WireGuard-Schnittstelle neu starten? Alle Tunnel brechen kurz ab und kommen wieder.',
    restarted: 'WireGuard mit {peers} Peers in {ms} ms neu gestartet',
    reload: 'Konfiguration neu laden', reloading: 'Lädt neu…', reloaded: 'Konfiguration neu geladen ({hash})', reloadedNoLoad: 'Konfiguration erzeugt ({hash}); in keinen Proxy geladen',
    pid: 'Prozess', uptime: 'Läuft seit', admin: 'Admin-API', configHash: 'Konfiguration', lastLoad: 'Zuletzt geladen', lastError: 'Letzter Fehler', restarts: 'Neustarts',
    proxyMode: 'Proxy-Modus', mode_caddy: 'lädt in Caddy', mode_render_only: 'nur erzeugen', none: 'keiner', failed: 'Fehlgeschlagen: {error}',
  },
});
