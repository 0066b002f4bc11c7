// German wordings of what other parties answered (@gatehouse/common/messages/outside.ts): the
// category in German, the other party's own words (`detail`) as they came.
import type { Translation } from '@gatehouse/common/messages/define.js';
import type { outside } from '@gatehouse/common/messages/outside.js';

export const outside_de = {
  'webhook.delivery.status': (p) => `Der Empfänger antwortete mit HTTP ${p.status}`,
  'webhook.delivery.timeout': (p) => `Keine Antwort innerhalb von ${p.ms} ms`,
  'webhook.delivery.dns': (p) => `Der Name des Empfängers lässt sich nicht auflösen: ${p.detail}`,
  'webhook.delivery.not_allowed': () => 'Die Adresse ist für Webhooks nicht erlaubt',
  'webhook.delivery.aborted': () => 'Abgebrochen',
  'webhook.delivery.invalid_url': () => 'Ungültige URL',
  'webhook.delivery.secret_unreadable': () =>
    'Das Geheimnis lässt sich mit diesem Master-Schlüssel nicht öffnen; bitte den Webhook mit einem neuen Geheimnis speichern',
  'webhook.delivery.network': (p) => `Netzwerkfehler: ${p.detail}`,
  'licence.service.offline_invalid': () => 'Der gespeicherte Schlüssel lässt sich mit den vertrauenswürdigen öffentlichen Schlüsseln nicht prüfen',
  'licence.service.bad_key': (p) => `Der Lizenzdienst lieferte einen Schlüssel, der sich nicht prüfen lässt: ${p.detail}`,
  'licence.service.revoked': (p) => `Vom Lizenzdienst widerrufen: ${p.detail}`,
  'licence.service.refused': (p) => `Der Lizenzdienst hat die Lizenz abgelehnt: ${p.detail}`,
  'licence.service.unreachable': (p) => `Der Lizenzdienst ist nicht erreichbar: ${p.detail}`,
  'licence.service.no_key': () => 'Der Lizenzdienst antwortete mit HTTP 200, aber ohne Schlüssel',
  'licence.service.status_detail': (p) => `Der Lizenzdienst antwortete mit HTTP ${p.status}: ${p.detail}`,
  'licence.service.status': (p) => `Der Lizenzdienst antwortete mit HTTP ${p.status}`,
  'licence.service.other': (p) => `Lizenzdienst: ${p.detail}`,
  'route.check.timeout': (p) => `Keine Antwort innerhalb von ${p.s} s`,
  'route.check.tcp_timeout': (p) => `Keine TCP-Verbindung innerhalb von ${p.s} s`,
  'route.check.no_gateway_target': () => 'Die Route hat kein Gateway-Ziel',
  'route.check.gateway_not_found': () => 'Gateway-Peer nicht gefunden',
  'route.check.gateway_disabled': () => 'Gateway-Peer deaktiviert',
  'route.check.no_listen_port': () => 'Die Route hat keinen Listen-Port',
  'route.check.network': (p) => `Netzwerkfehler: ${p.detail}`,
  'caddy.error.rejected': (p) => `Caddy hat die Konfiguration abgelehnt (HTTP ${p.status})`,
  'caddy.error.unreachable': () => 'Die Admin-API von Caddy ist nicht erreichbar',
  'caddy.error.timeout': (p) => `Die Admin-API von Caddy hat nicht innerhalb von ${p.ms} ms geantwortet`,
  'caddy.error.other': () => 'Fehler beim Laden der Konfiguration in Caddy',
  'rdp.check.refused': () => 'Verbindung abgelehnt',
  'rdp.check.timeout': (p) => `Keine Antwort innerhalb von ${p.ms} ms`,
  'rdp.check.host_unreachable': () => 'Host nicht erreichbar',
  'rdp.check.not_resolved': () => 'Name lässt sich nicht auflösen',
  'rdp.check.network': (p) => `Netzwerkfehler: ${p.detail}`,
  'rdp.check.no_address': () => 'Keine Adresse für diesen Weg',
  'rdp.check.no_gateway': () => 'Kein Gateway festgelegt',
  'rdp.check.gateway_error': (p) => `Gateway: ${p.detail}`,
  'rdp.check.gateway_down': (p, w) =>
    `Gateway "${p.name}" ist ${p.status === 'online' ? 'online' : p.status === 'offline' ? 'offline' : 'unbekannt'}: ${w(p.reason)}`,
  'rdp.check.no_linked_route': () => 'Keine verknüpfte L4-Route',
  'rdp.check.not_reported': (p) => `Gateway "${p.name}" hat die verknüpfte Route ${p.route_id} noch nicht gemeldet`,
  'rdp.check.gateway_cannot_reach': (p) => `Das Gateway "${p.name}" erreicht ${p.host}:${p.port} nicht`,
  'rdp.check.unreachable': () => 'nicht erreichbar',
  'rdp.check.not_checked': () => 'nicht geprüft',
  'backup.target.not_allowed': () => 'nicht erlaubt',
  'backup.target.error': (p) => `Fehler des Sicherungsziels: ${p.detail}`,
  'rdp.check.paths': (p, w) =>
    p.paths
      .map((x) => `${x.path === 'internal' ? 'intern' : x.path === 'external' ? 'extern' : x.path === 'gateway' ? 'Gateway' : x.path}: ${w(x.reason)}`)
      .join('; '),
} satisfies Translation<typeof outside>;
