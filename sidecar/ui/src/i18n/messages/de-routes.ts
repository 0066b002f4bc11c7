// German wordings of routes, their protection, RDP routes and home gateways (@gatehouse/common/messages).
import type { Translation, Words } from '@gatehouse/common/messages/define.js';
import { rdpCheckError, routeCheckError } from '@gatehouse/common/messages/read-back.js';
import type { routes } from '@gatehouse/common/messages/routes.js';
import type { rdp } from '@gatehouse/common/messages/rdp.js';
import type { gateways } from '@gatehouse/common/messages/gateways.js';

const upDown = (p: { error: string | null; status: number | null }, w: Words) =>
  p.error ? `: ${w(routeCheckError(p.error)!)}` : p.status !== null ? ` (HTTP ${p.status})` : '';
/** an RDP route's access mode (the path its status checks) */
const PATH: Record<string, string> = { internal: 'intern', external: 'extern', both: 'intern und extern', gateway: 'über Gateway' };
const BATCH: Record<string, string> = { enable: 'Aktivieren', disable: 'Deaktivieren', delete: 'Löschen' };

export const routes_de = {
  'route.not_consistent': () => 'Die Route wäre so nicht stimmig (fields nennt den Grund)',
  'route.owned_by_rdp': (p) => `Route ${p.route_id} gehört zur RDP-Route '${p.rdp_name}' (ID ${p.rdp_id}); bitte dort bearbeiten`,
  'route.domain_is_admin': (p) => `Die Domain ${p.domain} ist die Domain der Admin-Oberfläche (GATEHOUSE_ADMIN_DOMAIN)`,
  'route.domain_taken': (p) => `Die Domain ${p.domain} wird bereits von Route ${p.route_id} verwendet`,
  'redirect.domain_taken': (p) => `Die Domain ${p.domain} wird bereits von Weiterleitung ${p.redirect_host_id} verwendet`,
  'redirect.not_found': (p) => `Weiterleitung ${p.id} nicht gefunden`,
  'redirect.field.query_with_preserve_path': () =>
    'darf keine Query und kein Fragment haben, solange preserve_path an ist (Pfad und Query der Anfrage werden angehängt)',
  'redirect.field.loops': (p) => `zeigt auf ${p.domain} selbst: jede Anfrage würde erneut weitergeleitet`,
  'route.port_own': (p) => `Port ${p.port}/${p.protocol} wird von Gatehouse selbst verwendet (${p.use})`,
  'route.port_taken': (p) => `Port ${p.port}/${p.protocol} wird bereits von Route ${p.route_id} (${p.domain}) verwendet`,
  'route.not_gateway': (p) => `Route ${p.route_id} zielt nicht auf ein Gateway`,
  'route.no_mac': (p) => `Route ${p.route_id} hat keine MAC-Adresse`,
  'route.field.invalid_label': (p) => `Label "${p.label}" ist ungültig (Buchstaben, Ziffern und innere Bindestriche, 1-63 Zeichen)`,
  'route.field.wol_gateway_only': () => 'Wake-on-LAN braucht eine Gateway-Route (target_kind gateway)',
  'route.field.set_wol_mac': () => 'zuerst wol_mac an der Route setzen',
  'route.breaker_not_enabled': () => 'Der Circuit Breaker ist für diese Route nicht aktiviert',
  'route.field.breaker_must_be_enabled': () => 'muss true sein, um den Breaker zurückzusetzen',
  'route.udp_not_checkable': () =>
    'Verfügbarkeitsprüfungen gibt es für HTTP- und TCP-Routen: ein UDP-Dienst lässt sich ohne sein eigenes Protokoll nicht prüfen',
  'route.field.udp_not_checkable': () => 'UDP-Routen lassen sich nicht prüfen',
  'route.invalid_report': () => 'Ungültige Meldung',
  'route.field.only_l4': () => 'nur für L4-Routen (route_type l4)',
  'route.field.l4_protocol_required': () => 'für L4-Routen erforderlich (tcp oder udp)',
  'route.field.l4_required': () => 'für L4-Routen erforderlich',
  'route.field.udp_no_tls': () => 'UDP-Routen unterstützen nur none (kein TLS über UDP)',
  'route.field.only_http': () => 'nur für HTTP-Routen',
  'route.field.debug_only_http': () => 'nur für HTTP-Routen (der Trace zeigt HTTP-Anfragen)',
  'route.field.monitoring_not_udp': () => 'nicht für UDP-Routen (nur HTTP- und TCP-Routen lassen sich prüfen)',
  'route.field.peer_target_required': () => 'für Peer-Ziele erforderlich',
  'route.field.only_gateway_target': () => 'nur für Gateway-Ziele (target_kind gateway)',
  'route.field.gateway_target_required': () => 'für Gateway-Ziele erforderlich',
  'route.field.only_peer_target': () => 'nur für Peer-Ziele (Gateway-Routen verwenden target_peer_id, target_lan_host und target_lan_port)',
  'route.field.wol_mac_required': () => 'erforderlich, wenn wol_enabled true ist',
  'route.field.wildcard_needs_internal_tls': () =>
    'Wildcard-Domains brauchen GATEHOUSE_TLS=internal (ACME-HTTP- und TLS-ALPN-Challenges können keine Wildcard-Zertifikate ausstellen)',
  'route.field.ip_rule_needed': () => 'mindestens eine Regel, wenn der IP-Filter aktiv ist',
  'route.field.geo_no_database': () =>
    'ein Länderfilter braucht eine Länderdatenbank: GATEHOUSE_GEOIP_DB auf eine Datei im MaxMind-Format setzen (GeoLite2-Country oder DB-IP Lite Country)',
  'route.field.geo_unknown_country': (p) => `„${p.code}“ ist kein Ländercode nach ISO 3166-1 Alpha-2`,
  'route.field.acl_peer_needed': () => 'mindestens ein Peer, wenn die ACL aktiv ist',
  'route.field.mirror_target_needed': () => 'mindestens ein Ziel, wenn Spiegelung aktiv ist',
  'route.field.basic_password_required': () => 'erforderlich mit basic_auth_user',
  'route.field.basic_user_required': () => 'erforderlich mit basic_auth_password',
  'route.field.basic_needs_https': () => 'Basic Auth braucht HTTPS: das Passwort ginge sonst im Klartext über das Netz (https_enabled auf true setzen)',
  'route.field.basic_and_ip_filter': () =>
    'Basic Auth lässt sich nicht mit dem IP-Filter kombinieren (Routen-Anmeldung verwenden, deren Prüfung die IP berücksichtigt)',
  'route.field.has_route_auth_basic': () =>
    'diese Route hat eine Routen-Anmeldung (Login-Seite): zuerst entfernen (DELETE /routes/:id/auth) oder Basic Auth auslassen',
  'route.field.has_route_auth_l4': () =>
    'diese Route hat eine Routen-Anmeldung, die nur mit HTTP-Routen funktioniert: zuerst entfernen (DELETE /routes/:id/auth)',
  'rdp.field.target_required_internal': () => 'erforderlich (oder target_peer_id: dessen Tunnel-IP wird verwendet)',
  'rdp.field.target_required_external': () => 'erforderlich: die öffentliche IP-Adresse oder Domain des RDP-Hosts',
  'rdp.field.wol_not_external': () =>
    'nicht für den Zugriffsmodus external (ein Magic Packet braucht das LAN des Ziels: internal, both oder gateway verwenden)',
  'rdp.field.target_required_both': () => 'erforderlich: die interne Adresse (oder target_peer_id: dessen Tunnel-IP wird verwendet)',
  'rdp.field.external_host_required': () => 'für den Zugriffsmodus both erforderlich: die öffentliche Adresse',
  'rdp.field.gateway_peer_required': () => 'für den Zugriffsmodus gateway erforderlich',
  'rdp.field.target_required_gateway': () => 'für den Zugriffsmodus gateway erforderlich: der RDP-Host im LAN des Gateways',
  'rdp.field.listen_port_required': () => 'für den Zugriffsmodus gateway erforderlich: der öffentliche TCP-Port der verknüpften L4-Route',
  'rdp.field.gateway_host_required': () => 'erforderlich mit gateway_port',
  'rdp.field.only_both': () => 'nur für den Zugriffsmodus both',
  'rdp.field.only_external_both_gateway': () => 'nur für die Zugriffsmodi external, both und gateway',
  'rdp.field.only_gateway': () => 'nur für den Zugriffsmodus gateway',
  'rdp.field.only_internal_both': () => 'nur für die Zugriffsmodi internal und both',
  'rdp.field.only_both_external_uses_target': () => 'nur für den Zugriffsmodus both (external verwendet target_host als öffentliche Adresse)',
  'route_auth.http_only': () => 'Routen-Anmeldung gibt es nur für HTTP-Routen, nicht für L4-Routen',
  'route_auth.field.l4_route': () => 'auf einer L4-Route nicht verfügbar',
  'route_auth.basic_auth': () => 'Basic Auth und Routen-Anmeldung lassen sich auf einer Route nicht kombinieren: zuerst Basic Auth entfernen',
  'route_auth.field.basic_auth': () => 'die Route hat Basic Auth',
  'route_auth.smtp_needed': () => 'E-Mail-Codes brauchen SMTP-Einstellungen (PUT /api/v1/smtp)',
  'route_auth.field.smtp_needed': () => 'SMTP ist nicht eingerichtet',
  'route_auth.password_required': () => 'Für die Methode email_password ist ein Passwort erforderlich',
  'route_auth.not_configured': () => 'Zuerst die Konfiguration der Routen-Anmeldung speichern (POST /api/v1/routes/:id/auth)',
  'route_auth.field.not_configured': () => 'nicht eingerichtet',
  'route_auth.not_route_user': () => 'Der Benutzer gehört nicht zu den Benutzern der Route (user_ids)',
  'route_auth.field.not_route_user': () => 'kein Benutzer dieser Route',
  'route_auth.no_totp_setup': () => 'Zuerst totp-setup ausführen',
  'route_auth.field.no_totp_setup': () => 'keine TOTP-Einrichtung im Gange',
  'route_auth.code_mismatch': () => 'Der Code stimmt nicht (Uhr des Geräts prüfen)',
  'route_auth.field.invalid_code': () => 'ungültiger Code',
  'route_auth.image_empty': () => 'Die Datei ist leer',
  'route_auth.image_too_large': (p) => `Datei größer als ${p.max_bytes} Bytes`,
  'route_auth.image_type': () => 'Kein PNG-, JPEG-, GIF- oder WebP-Bild (SVG wird nicht angenommen)',
  'route_auth.field.image_type': () => 'muss ein PNG-, JPEG-, GIF- oder WebP-Bild sein',
  'route_auth.not_allowed': () => 'nicht erlaubt',
  'route_auth.not_fetched': () => 'konnte nicht abgerufen werden',
  'route.created': (p) => `Route ${p.domain} angelegt`,
  'redirect.created': (p) => `Weiterleitung ${p.domain} angelegt (nach ${p.target_url})`,
  'redirect.updated': (p) => `Weiterleitung ${p.domain} geändert`,
  'redirect.deleted': (p) => `Weiterleitung ${p.domain} gelöscht`,
  'route.updated': (p) => `Route ${p.domain} geändert`,
  'route.enabled': (p) => `Route ${p.domain} aktiviert`,
  'route.disabled': (p) => `Route ${p.domain} deaktiviert`,
  'route.deleted': (p) => `Route ${p.domain} gelöscht`,
  'route.batch': (p) => `Sammelaktion ${BATCH[p.action] ?? p.action} für ${p.count} Route(n)`,
  'route.up': (p, w) => `Route ${p.domain} ist erreichbar${upDown(p, w)}`,
  'route.down': (p, w) => `Route ${p.domain} ist nicht erreichbar${upDown(p, w)}`,
  'route.breaker_opened': (p) => `Circuit Breaker von Route ${p.route_id} nach ${p.failure_count} Fehlern in Folge geöffnet`,
  'route.breaker_closed': (p) => `Circuit Breaker von Route ${p.route_id} geschlossen: eine Probeanfrage gelang nach ${p.open_seconds} s`,
  'route.breaker_reset': (p) => `Circuit Breaker von Route ${p.domain} zurückgesetzt`,
  'route_auth.enabled': (p) => `Routen-Anmeldung für ${p.domain} aktiviert (${p.method}${p.two_factor_method ? ` + ${p.two_factor_method}` : ''})`,
  'route_auth.updated': (p) => `Routen-Anmeldung für ${p.domain} geändert (${p.method}${p.two_factor_method ? ` + ${p.two_factor_method}` : ''})`,
  'route_auth.removed': (p) => `Routen-Anmeldung von ${p.domain} entfernt; ihre Sitzungen wurden beendet`,
  'route_auth.branding_uploaded': (p) => `${p.kind === 'logo' ? 'Logo' : 'Hintergrundbild'} der Login-Seite für ${p.domain} hochgeladen`,
  'route_auth.branding_removed': (p) => `${p.kind === 'logo' ? 'Logo' : 'Hintergrundbild'} der Login-Seite für ${p.domain} entfernt`,
  'route_auth.signed_out': (p) => `Von ${p.domain} abgemeldet`,
  'route_auth.mail_failed': (p) => `Mail mit Anmeldecode für ${p.domain} fehlgeschlagen`,
  'certificate.not_found': () => 'Zertifikat nicht gefunden',
  'certificate.name_taken': (p) => `Ein Zertifikat namens "${p.name}" existiert bereits`,
  'certificate.invalid': () => 'Das Zertifikat oder sein Schlüssel wurde nicht angenommen',
  'certificate.in_use': (p) =>
    `Zertifikat "${p.name}" wird von ${p.routes.length === 1 ? 'Route' : 'den Routen'} ${p.routes.join(', ')} verwendet: wählen Sie dort zuerst ein anderes Zertifikat`,
  'certificate.field.name_taken': () => 'ein Zertifikat mit diesem Namen existiert bereits',
  'certificate.field.not_pem': () => 'muss ein oder mehrere PEM-Zertifikate sein (-----BEGIN CERTIFICATE-----), das Blatt-Zertifikat zuerst',
  'certificate.field.unreadable': (p) => `Zertifikat ${p.index} der Kette ist nicht lesbar`,
  'certificate.field.no_names': () => 'das Zertifikat nennt keinen DNS-Namen (weder alternative Namen noch Common Name)',
  'certificate.field.expired': (p) => `das Zertifikat ist am ${p.not_after} abgelaufen`,
  'certificate.field.not_yet_valid': (p) => `das Zertifikat gilt erst ab ${p.not_before}`,
  'certificate.field.chain_order': (p) =>
    `die Kette ist falsch geordnet: Zertifikat ${p.index + 1} hat Zertifikat ${p.index} nicht ausgestellt (zuerst das Blatt-Zertifikat, dann jeweils der Aussteller)`,
  'certificate.field.key_unreadable': () => 'muss ein unverschlüsselter privater Schlüssel in PEM sein (PKCS#8, PKCS#1 oder SEC1)',
  'certificate.field.key_mismatch': () => 'der private Schlüssel gehört nicht zum Zertifikat (zum öffentlichen Schlüssel des Blatt-Zertifikats)',
  'certificate.field.still_used': (p) => `das neue Zertifikat deckt ${p.routes.join(', ')} nicht ab, die dieses Zertifikat verwenden`,
  'certificate.created': (p) => `Zertifikat "${p.name}" hochgeladen (${p.names.join(', ')})`,
  'certificate.replaced': (p) => `Zertifikat "${p.name}" ersetzt, gültig bis ${p.not_after}`,
  'certificate.deleted': (p) => `Zertifikat "${p.name}" gelöscht`,
  'certificate.expiring': (p) =>
    `Eigenes Zertifikat "${p.name}" läuft in ${p.days_left} ${p.days_left === 1 ? 'Tag' : 'Tagen'} ab (${p.not_after}): laden Sie die Verlängerung hoch`,
  'route.field.certificate_https_only': () => 'ein eigenes Zertifikat braucht eine HTTP-Route mit HTTPS',
  'route.field.no_such_certificate': (p) => `kein Zertifikat mit der ID ${p.id}`,
  'route.field.certificate_not_covering': (p) => `Zertifikat "${p.name}" deckt ${p.domain} nicht ab`,
  'share_link.not_found': () => 'Freigabelink nicht gefunden',
  'share_link.needs_route_auth': () => 'Freigabelinks brauchen eine Routen-Anmeldung oder Basic Auth auf der Route',
  'share_link.field.needs_route_auth': () => 'zuerst die Routen-Anmeldung oder Basic Auth dieser Route einrichten',
  'share_link.field.wildcard': () => 'eine Wildcard-Route hat keine einzelne Adresse für einen Link',
  'share_link.field.expiry_past': () => 'muss in der Zukunft liegen',
  'share_link.field.expiry_too_far': (p) => `höchstens ${p.days} Tage ab jetzt (Einstellung für Freigabelinks)`,
  'share_link.field.path_prefix': () => 'ein Pfad wie /docs: Segmente aus URL-Pfadzeichen, keine . oder ..-Segmente, kein ? # % oder \\',
  'share_link.created': (p) => `Freigabelink ${p.link_id} für ${p.domain} erstellt${p.note ? ` (${p.note})` : ''}, gültig bis ${p.expires_at}`,
  'share_link.used': (p) => `Freigabelink ${p.link_id} von ${p.domain} geöffnet von ${p.ip}`,
  'share_link.revoked': (p) => `Freigabelink ${p.link_id} von ${p.domain} widerrufen; seine Sitzungen wurden beendet`,
  'share_link.settings_changed': (p) => `Freigabelinks: längste Gültigkeit auf ${p.max_expiry_days} Tage gesetzt`,
  'route.field.backends_http_only': () => 'mehrere Backends gibt es nur für HTTP-Routen',
  'route.field.backend_gateway_alone': () => 'ein Gateway-Ziel steht allein: mehrere Backends müssen alle Peers sein',
  'route.field.backend_host_gateway_only': () => 'target_host nur bei einem Gateway-Backend (der LAN-Host dahinter)',
  'route.field.backend_host_required': () => 'erforderlich bei einem Gateway-Backend (der LAN-Host dahinter)',
  'route.field.backend_duplicate': () => 'derselbe Peer und Port doppelt',
  'route.field.backends_differ_from_target': () =>
    'das erste Backend ist das Ziel der Route: entweder die Zielfelder oder backends senden, oder in beiden dasselbe',
  'route.field.lb_cookie_needed': () => 'erforderlich bei lb_policy cookie',
  'route.field.lb_cookie_name': () => 'muss ein Cookie-Name sein (Buchstaben, Ziffern, - und _, höchstens 64)',
  'route.field.health_timeout': () => 'darf nicht länger als interval_s sein',
  'route.field.health_path': () => 'muss ein Pfad sein, der mit / beginnt (druckbares ASCII, keine Leerzeichen, höchstens 256)',
  'route.field.header_name': () => "muss ein Header-Name sein (Buchstaben, Ziffern und !#$%&'*+.^_`|~-, höchstens 100)",
  'route.field.header_value': () => 'nur druckbare Zeichen, höchstens 1000',
  'route.field.header_protected': (p) => `${p.header} kann nicht gesetzt oder gelöscht werden (Hop-by-Hop oder sicherheitsrelevant: siehe Routen-Anleitung)`,
  'route.field.header_placeholder': (p) =>
    `unbekannter Platzhalter ${p.placeholder}: {client_ip}, {host}, {route_id}, {route_domain} oder {user} verwenden (geschweifte Klammern nur für Platzhalter)`,
  'route.field.header_set_and_delete': (p) => `${p.header} wird zugleich gesetzt und gelöscht`,
  'route.field.compression': () => 'muss eine Liste aus zstd und gzip sein (je einmal) oder leer',
  'route.backend_down': (p) => `Backend ${p.backend} der Route ${p.domain} ist ausgefallen (Health-Check fehlgeschlagen)`,
  'route.backend_up': (p) => `Backend ${p.backend} der Route ${p.domain} ist wieder erreichbar`,
} satisfies Translation<typeof routes>;

const END: Record<string, string> = {
  client: 'vom Client beendet',
  lost: 'Verbindung verloren',
  disconnected: 'getrennt',
  route_disabled: 'Route deaktiviert',
  route_deleted: 'Route gelöscht',
};

export const rdp_de = {
  'rdp.not_connectable': (p) =>
    `RDP-Route "${p.name}" hat keine Adresse, mit der sich ein Client verbinden kann (ihre ${p.access_mode}-Einstellungen sind unvollständig)`,
  'rdp.disabled': (p) => `RDP-Route "${p.name}" ist deaktiviert`,
  'rdp.maintenance': (p) => `RDP-Route "${p.name}" ist bis ${p.until} im Wartungsfenster${p.note ? `: ${p.note}` : ''}`,
  'rdp.reenter_after_rotation': (p) =>
    `RDP-Route "${p.name}": die Zugangsdaten müssen nach einer Hauptschlüssel-Rotation von einem Admin neu eingegeben werden`,
  'rdp.one_time_key_invalid': () => 'Ungültiger Einmalschlüssel',
  'rdp.field.not_rsa_key': () => 'kein öffentlicher RSA-Schlüssel (Base64 SPKI DER), der mit RSA-OAEP SHA-256 nutzbar ist',
  'rdp.field.rsa_bits': (p) => `der RSA-Schlüssel hat ${p.bits} Bit; ${p.min} bis ${p.max} werden angenommen`,
  'rdp.field.rsa_exponent': () => 'der öffentliche RSA-Exponent muss ungerade und mindestens 3 sein',
  'rdp.credentials_old_key': () =>
    'Die gespeicherten Zugangsdaten wurden für einen Serverschlüssel verschlüsselt, der nicht mehr aktuell ist; ein Admin muss sie neu eingeben',
  'rdp.credentials_unreadable': () => 'Die gespeicherten Zugangsdaten lassen sich mit dem Serverschlüssel nicht öffnen; ein Admin muss sie neu eingeben',
  'rdp.field.no_server_key': () => 'es gibt noch keinen Serverschlüssel: mit dem Schlüssel von GET /rdp/pubkey verschlüsseln',
  'rdp.field.kid_not_current': (p) =>
    `für Schlüssel ${p.kid} erstellt, der nicht der aktuelle Serverschlüssel ${p.current} ist: erneut mit dem Schlüssel von GET /rdp/pubkey verschlüsseln`,
  'rdp.no_pending_rotation': (p) => `RDP-Route '${p.name}' hat keine ausstehende Rotation der Zugangsdaten`,
  'rdp.credentials_retired_key': (p) =>
    `Die Zugangsdaten der RDP-Route '${p.name}' wurden für den ausgemusterten Schlüssel ${p.kid} erstellt: vor der Bestätigung neu eingeben (PUT /rdp/${p.id}/credentials)`,
  'rdp.name_taken': (p) => `Eine RDP-Route namens '${p.name}' existiert bereits (ID ${p.id})`,
  'rdp.no_wol': (p) => `RDP-Route "${p.name}" hat kein Wake-on-LAN`,
  'rdp.field.wol_not_enabled': () => 'Wake-on-LAN ist für diese RDP-Route nicht aktiviert',
  'rdp.no_mac': (p) => `RDP-Route "${p.name}" hat keine MAC-Adresse`,
  'rdp.field.set_wol_mac': () => 'zuerst wol_mac an der RDP-Route setzen',
  'rdp.no_gateway': (p) => `RDP-Route "${p.name}" hat kein Gateway`,
  'rdp.field.gateway_needed': () => 'eine Route im Gateway-Modus braucht ihren Gateway-Peer',
  'rdp.magic_packet_failed': (p) => `Das Magic Packet konnte nicht an ${p.target} gesendet werden: ${p.error}`,
  'rdp.end.client': () => END.client,
  'rdp.end.lost': () => END.lost,
  'rdp.end.disconnected': () => END.disconnected,
  'rdp.end.route_disabled': () => END.route_disabled,
  'rdp.end.route_deleted': () => END.route_deleted,
  'rdp.created': (p) => `RDP-Route ${p.name} angelegt (${PATH[p.access_mode] ?? p.access_mode})`,
  'rdp.updated': (p) => `RDP-Route ${p.name} geändert`,
  'rdp.deleted': (p) => `RDP-Route ${p.name} gelöscht`,
  'rdp.toggled': (p) => `RDP-Route ${p.name} ${p.enabled ? 'aktiviert' : 'deaktiviert'}`,
  'rdp.reachable': (p) => `RDP-Route "${p.name}" ist wieder erreichbar (${PATH[p.path] ?? p.path}${p.latency_ms !== null ? `, ${p.latency_ms} ms` : ''})`,
  // rows written before the reason was data carry the check's English text: read back as its codes
  'rdp.unreachable': (p, w) => {
    const why = p.reason ?? rdpCheckError(p.error);
    return `RDP-Route "${p.name}" ist nicht erreichbar (${PATH[p.path] ?? p.path}${why ? `: ${w(why)}` : ''})`;
  },
  'rdp.session_started': (p) => `RDP-Sitzung ${p.session_id} auf "${p.name}" gestartet${p.client_name ? ` von ${p.client_name}` : ''}`,
  'rdp.session_ended': (p, w) => `RDP-Sitzung ${p.session_id} auf "${p.name}" beendet (${w({ code: `rdp.end.${p.reason}` })}) nach ${p.duration_s} s`,
  'rdp.disconnect_requested': (p) =>
    `Trennung für ${p.count} aktive Sitzung(en) der RDP-Route "${p.name}" angefordert${p.method === 'gateway' ? (p.error ? `; das Gateway konnte die Verbindungen nicht schließen: ${p.error}` : `; das Gateway hat ${p.closed} Verbindung(en) geschlossen`) : ''}`,
  'rdp.wol_failed': (p) => `Wake-on-LAN für RDP-Route "${p.name}" fehlgeschlagen: ${p.error}`,
  'rdp.wol_sent': (p) =>
    `Wake-on-LAN-Paket für RDP-Route "${p.name}" (${p.mac}) ${p.via === 'gateway' ? 'über ihr Gateway gesendet' : `an ${p.sent_to.join(', ')} gesendet`}`,
  'rdp.credentials_released': (p) =>
    `Zugangsdaten der RDP-Route "${p.name}" an Desktop-Client-Token #${p.token_id}${p.client_name ? ` auf ${p.client_name}` : ''} herausgegeben (für dessen Einmalschlüssel verschlüsselt)`,
} satisfies Translation<typeof rdp>;

const SELF_CHECK: Record<string, string> = { http_proxy: 'HTTP-Proxy', api: 'Companion-API', dns: 'DNS', tcp_listeners: 'TCP-Listener' };
const STATUS: Record<string, string> = { online: 'online', offline: 'offline', unknown: 'unbekannt' };

export const gateways_de = {
  'gateway.not_gateway_peer': (p) => `Peer ${p.peer_id} ist kein Gateway-Peer (mit is_gateway: true anlegen)`,
  'gateway.no_private_key': (p) => `Peer "${p.name}" hat keinen gespeicherten privaten Schlüssel, daher lässt sich keine gateway.env erstellen`,
  'gateway.no_tokens_yet': (p) => `Gateway ${p.peer_id} hat noch keine Tokens: zuerst seine gateway.env neu erzeugen`,
  'gateway.inactive': (p) => `Gateway "${p.name}" ist deaktiviert oder abgelaufen`,
  'gateway.wake_failed': (p) => `Der Gateway-Companion konnte nicht gebeten werden, den Host zu wecken: ${p.error}`,
  'gateway.health.lan_reachable': (p) => `${p.up}/${p.total} LAN-Ziele erreichbar`,
  'gateway.health.lan_unreachable': (p) => `keines seiner ${p.total} LAN-Ziele ist erreichbar`,
  'gateway.health.self_check_passed': () => 'keine Routen; Selbsttest bestanden',
  'gateway.health.self_check_failed': (p) =>
    `keine Routen; Selbsttest fehlgeschlagen${p.failed.length ? ` (${p.failed.map((f) => SELF_CHECK[f] ?? f).join(', ')})` : ''}`,
  'gateway.health.reported': (p) => `laut Gateway: ${p.detail}`,
  'gateway.status.no_tokens': () => 'noch keine Tokens ausgestellt',
  'gateway.status.no_heartbeat': () => 'noch kein Heartbeat empfangen',
  'gateway.status.heartbeat_stale': (p) => `seit ${p.age_s} s kein Heartbeat (offline nach ${p.offline_after_s} s)`,
  'gateway.status.unhealthy': (p, w) => `Heartbeat empfangen, aber ${p.health ? w(p.health) : 'das Gateway meldet sich als nicht funktionsfähig'}`,
  'gateway.status.not_recorded': (p) => `Grund nicht erfasst (gespeichert: ${p.detail})`,
  'gateway.status.healthy': (p, w) => (p.health ? w(p.health) : 'Heartbeat empfangen'),
  'gateway.status_changed': (p, w) => `Gateway "${p.name}" ist ${STATUS[p.to]} (vorher ${STATUS[p.from]}): ${w(p.reason)}`,
  'gateway.tokens_rotated': (p) => `Gateway "${p.name}": Tokens erneuert; der Companion braucht die neue gateway.env`,
  'gateway.wol_failed': (p) => `Wake-on-LAN für ${p.domain} über Gateway "${p.name}" fehlgeschlagen: ${p.error}`,
  'gateway.wol_sent': (p) => `Wake-on-LAN-Paket für ${p.domain} (${p.mac}) über Gateway "${p.name}" gesendet`,
} satisfies Translation<typeof gateways>;
