// German wordings of the OpenID Connect messages (@gatehouse/common/messages/oidc.ts).
import type { Translation } from '@gatehouse/common/messages/define.js';
import type { oidc } from '@gatehouse/common/messages/oidc.js';

export const oidc_de = {
  'oidc.field.issuer_url': () => 'muss eine http(s)-URL ohne Benutzername, Passwort, Query oder Fragment sein, etwa https://id.example.com/realms/main',
  'oidc.field.issuer_https': () => 'muss mit https:// beginnen (http:// nur für einen Anbieter mit allow_private)',
  'oidc.field.claim': () => 'muss ein Claim-Name sein (Buchstaben, Ziffern und _ . : / -)',
  'oidc.field.scope': () => 'müssen Scope-Namen sein (Buchstaben, Ziffern und _ . : / -)',
  'oidc.field.scopes_openid': () => 'muss openid enthalten',
  'oidc.field.mapping_match': () => 'genau eines von group oder email angeben',
  'oidc.name_taken': (p) => `Ein Anbieter namens ${p.name} existiert bereits`,
  'oidc.issuer_http': () => 'Der Issuer muss https verwenden, außer der Anbieter darf private Adressen erreichen (allow_private)',
  'oidc.in_use': (p) => `Besucher von ${p.domains.join(', ')} melden sich über diesen Anbieter an: zuerst deren Routen-Anmeldung ändern`,
  'oidc.field.in_use': () => 'von einer Routen-Anmeldung verwendet',
  'oidc.test.ok': (p) => `Discovery funktioniert: ${p.issuer} nennt seine Autorisierungs-, Token- und Schlüssel-Endpunkte`,
  'oidc.test.not_allowed': () =>
    'Der Issuer liegt auf Loopback, in einem privaten Bereich oder auf diesem Server: für diesen Anbieter erlauben (allow_private) oder für alle (GATEHOUSE_OUTBOUND_ALLOW_PRIVATE=oidc)',
  'oidc.test.unreachable': (p) => `Das Discovery-Dokument war nicht abrufbar: ${p.detail}`,
  'oidc.test.status': (p) => `Das Discovery-Dokument antwortete mit HTTP ${p.status}`,
  'oidc.test.not_json': () => 'Das Discovery-Dokument ist kein JSON',
  'oidc.test.issuer_mismatch': (p) => `Das Discovery-Dokument nennt den Issuer ${p.found}, nicht ${p.expected}: genau den genannten Issuer eintragen`,
  'oidc.test.missing_endpoint': (p) => `Das Discovery-Dokument enthält kein ${p.field}`,
  'oidc.password_off': () => 'Dieses Konto meldet sich über seinen Identitätsanbieter an: die Anmeldung mit Passwort ist für es abgeschaltet',
  'oidc.provider_created': (p) => `Anmelde-Anbieter "${p.name}" angelegt`,
  'oidc.provider_updated': (p) => `Anmelde-Anbieter "${p.name}" geändert (${p.fields.join(', ')})`,
  'oidc.provider_deleted': (p) => `Anmelde-Anbieter "${p.name}" gelöscht`,
  'oidc.refused': (p) => `Eine Anmeldung über ${p.provider} wurde abgelehnt: ${p.reason}`,
  'oidc.account_created': (p) => `Konto ${p.username} bei der ersten Anmeldung über ${p.provider} angelegt (Rolle ${p.role})`,
  'oidc.account_linked': (p) => `Konto ${p.username} über seine bestätigte E-Mail-Adresse mit ${p.provider} verknüpft`,
} satisfies Translation<typeof oidc>;
