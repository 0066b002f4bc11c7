// Messages of the OpenID Connect providers and the admin sign-in through them (src/oidc): field
// messages, the discovery test's findings, refusals of a sign-in and the activity rows.
import type { Catalogue } from './define.js';

export const oidc = {
  'oidc.field.issuer_url': () => 'must be an http(s) URL without user name, password, query or fragment, such as https://id.example.com/realms/main',
  'oidc.field.issuer_https': () => 'must start with https:// (http:// only for a provider with allow_private)',
  'oidc.field.claim': () => 'must be a claim name (letters, digits and _ . : / -)',
  'oidc.field.scope': () => 'must be scope names (letters, digits and _ . : / -)',
  'oidc.field.scopes_openid': () => 'must include openid',
  'oidc.field.mapping_match': () => 'name exactly one of group or email',
  'oidc.name_taken': (p: { name: string }) => `A provider named ${p.name} exists`,
  'oidc.issuer_http': () => 'The issuer must use https unless the provider may reach private addresses (allow_private)',
  'oidc.in_use': (p: { domains: string[] }) => `Visitors of ${p.domains.join(', ')} sign in through this provider: change their route auth first`,
  'oidc.field.in_use': () => 'in use by route auth',
  // POST /auth/oidc/providers/:id/test
  'oidc.test.ok': (p: { issuer: string }) => `Discovery works: ${p.issuer} names its authorization, token and key endpoints`,
  'oidc.test.not_allowed': () =>
    'The issuer is on loopback, a private range or this server: allow it for this provider (allow_private) or for every provider (GATEHOUSE_OUTBOUND_ALLOW_PRIVATE=oidc)',
  'oidc.test.unreachable': (p: { detail: string }) => `The discovery document could not be fetched: ${p.detail}`,
  'oidc.test.status': (p: { status: number }) => `The discovery document answered HTTP ${p.status}`,
  'oidc.test.not_json': () => 'The discovery document is not JSON',
  'oidc.test.issuer_mismatch': (p: { expected: string; found: string }) =>
    `The discovery document names the issuer ${p.found}, not ${p.expected}: use exactly the issuer it names`,
  'oidc.test.missing_endpoint': (p: { field: string }) => `The discovery document has no ${p.field}`,
  'oidc.password_off': () => 'This account signs in through its identity provider: password sign-in is off for it',
  // activity
  'oidc.provider_created': (p: { name: string }) => `Sign-in provider "${p.name}" created`,
  'oidc.provider_updated': (p: { name: string; fields: string[] }) => `Sign-in provider "${p.name}" updated (${p.fields.join(', ')})`,
  'oidc.provider_deleted': (p: { name: string }) => `Sign-in provider "${p.name}" deleted`,
  'oidc.refused': (p: { provider: string; reason: string }) => `A sign-in through ${p.provider} was refused: ${p.reason}`,
  'oidc.account_created': (p: { username: string; provider: string; role: string }) =>
    `Account ${p.username} created at its first sign-in through ${p.provider} (role ${p.role})`,
  'oidc.account_linked': (p: { username: string; provider: string }) => `Account ${p.username} linked to ${p.provider} by its verified e-mail address`,
} satisfies Catalogue;
