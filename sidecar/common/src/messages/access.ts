// Messages of users, sign-ins, API tokens, desktop clients, settings, mail and webhooks: refusals and activity rows.
import type { Catalogue } from './define.js';

/** The things a generic "not found" names (resource.not_found). */
export type Resource =
  | 'Route'
  | 'Token'
  | 'User'
  | 'Webhook'
  | 'Machine'
  | 'Peer'
  | 'Gateway peer'
  | 'Backup job'
  | 'RDP route'
  | 'RDP session'
  | 'Endpoint'
  | 'Logo'
  | 'Background image'
  | 'Config link'
  | 'OIDC provider';

export const access = {
  'resource.not_found': (p: { what: Resource }) => `${p.what} not found`,
  // users and sign-in
  'user.name_taken': (p: { username: string }) => `A user named ${p.username} exists`,
  'user.name_taken_any_case': (p: { username: string }) => `A user named ${p.username} exists (names are compared without regard to case)`,
  'user.field.in_use': () => 'already in use',
  'user.last_admin_role': () => 'The last admin cannot lose the admin role',
  'user.field.one_admin_remains': () => 'at least one admin must remain',
  'user.delete_self': () => 'You cannot delete your own account',
  'user.field.delete_self': () => 'cannot delete the signed-in user',
  'user.last_admin_delete': () => 'The last admin cannot be deleted',
  'user.field.differ_from_current': () => 'must differ from the current password',
  'user.field.confirm_mismatch': () => 'does not match new_password',
  // the second factor of admin-UI accounts
  'second_factor.no_setup': () => 'No TOTP setup is pending: start one first',
  'second_factor.field.no_setup': () => 'start a TOTP setup first',
  'second_factor.code_mismatch': () => 'The code does not match the new secret',
  'second_factor.field.invalid_code': () => 'wrong or expired code',
  'second_factor.field.six_digits': () => 'must be the 6 digits the app shows',
  'second_factor.none': () => 'This account has no second factor',
  'second_factor.required_by_policy': () =>
    'A second factor is required for every account (Security settings): set up a new TOTP to replace this one, or ask an admin to change the policy',
  'second_factor.sign_in_pending': () => 'Sign in with username and password first',
  'second_factor.last_factor_required': () =>
    'A second factor is required for every account (Security settings): this is your last one; add another (a passkey or an authenticator app) first',
  'passkey.no_origin': () => "Passkeys need the admin UI's public origin: set GATEHOUSE_ADMIN_ORIGIN (or GATEHOUSE_ADMIN_DOMAIN) and restart Gatehouse",
  'passkey.no_challenge': () => 'No passkey request is pending (or it expired): start again',
  'passkey.rejected': () => 'The passkey could not be verified',
  'passkey.field.rejected': () => 'not accepted: try again with the passkey of this account',
  'passkey.unknown': () => 'This passkey is not known here',
  'passkey.none': () => 'This account has no passkey',
  'passkey.registered_already': () => 'This passkey is registered already',
  // API tokens and desktop clients
  'token.fingerprint_required': (p: { header: string }) => `The ${p.header} header is required`,
  'token.field.fingerprint_required': () => 'required: the machine fingerprint',
  'token.fingerprint_too_long': (p: { header: string }) => `The ${p.header} header is too long`,
  'client.not_registered': () => 'This machine is not registered: POST /api/v1/client/register first',
  'client.peer_deleted': () => 'The peer of this machine was deleted: POST /api/v1/client/register to get a new one',
  'client.no_free_name': (p: { hostname: string }) => `No free peer name for hostname "${p.hostname}"`,
  'client.bound_peer_gone': () => 'The peer this token is bound to no longer exists: ask an admin to bind the token again',
  'client.registered_concurrently': () => 'This machine registered concurrently; retry',
  'client.status_too_large': (p: { max_bytes: number }) => `The status is larger than ${p.max_bytes} bytes of JSON`,
  // proxy, mail
  'proxy.rejected': (p: { error: string }) => `proxy rejected the configuration: ${p.error}`,
  'proxy.unreachable': (p: { error: string }) => `proxy is not reachable: ${p.error}`,
  'smtp.not_configured': () => 'SMTP is not configured',
  'smtp.field.configure_first': () => 'configure the SMTP settings first',
  'smtp.send_failed': (p: { error: string }) => `Sending mail failed: ${p.error}`,
  // activity: users and sign-in
  'user.created': (p: { username: string }) => `User ${p.username} created`,
  'user.updated': (p: { username: string }) => `User ${p.username} updated`,
  'user.deleted': (p: { username: string }) => `User ${p.username} deleted`,
  'user.password_reset': (p: { username: string }) => `Password of ${p.username} reset by an admin`,
  'user.bootstrapped': (p: { username: string }) => `First admin ${p.username} created`,
  'auth.signed_in': (p: { username: string }) => `${p.username} signed in`,
  'auth.signed_out': () => 'Signed out',
  'auth.password_changed': (p: { username: string }) => `${p.username} changed their password`,
  'auth.login_failed': (p: { username: string }) => `Failed login for ${p.username}`,
  'auth.locked': (p: { username: string; failures: number }) => `Account ${p.username} locked after ${p.failures} failed logins`,
  'auth.unlocked_by_admin': (p: { username: string }) => `Account ${p.username} unlocked by an admin`,
  'auth.unlocked_cli': (p: { username: string }) => `Account ${p.username} unlocked from the CLI`,
  'second_factor.totp_enabled': (p: { username: string }) => `${p.username} activated a TOTP second factor`,
  'second_factor.totp_removed': (p: { username: string }) => `${p.username} removed their TOTP second factor`,
  'second_factor.recovery_codes_renewed': (p: { username: string }) => `${p.username} renewed their recovery codes`,
  'second_factor.reset': (p: { username: string }) => `Second factor of ${p.username} reset`,
  'second_factor.recovery_code_used': (p: { username: string }) => `${p.username} signed in with a recovery code`,
  'second_factor.passkey_added': (p: { username: string }) => `${p.username} added a passkey`,
  'second_factor.passkey_renamed': (p: { username: string }) => `${p.username} renamed a passkey`,
  'second_factor.passkey_removed': (p: { username: string }) => `${p.username} removed a passkey`,
  'route_auth.login_failed': (p: { domain: string; reason: string }) => `Failed route login on ${p.domain} (${p.reason})`,
  'route_auth.locked': (p: { domain: string; who: string; failures: number }) => `Route login ${p.domain} locked for ${p.who} after ${p.failures} failures`,
  'route_auth.signed_in': (p: { who: string; domain: string; method: string }) => `${p.who} signed in to ${p.domain} (${p.method})`,
  'route_auth.totp_setup': (p: { domain: string; username: string | null }) => `TOTP setup started for ${p.domain}${p.username ? ` (user ${p.username})` : ''}`,
  'route_auth.totp_activated': (p: { domain: string; username: string | null }) => `TOTP activated for ${p.domain}${p.username ? ` (user ${p.username})` : ''}`,
  // activity: tokens and clients
  'token.created': (p: { name: string }) => `API token ${p.name} created`,
  'token.revoked': (p: { name: string }) => `API token ${p.name} revoked`,
  'token.binding_reset': (p: { name: string }) => `Machine binding of API token ${p.name} reset`,
  'token.updated': (p: { name: string; fields: string[] }) => `API token ${p.name} updated (${p.fields.join(', ')})`,
  'token.bound': (p: { name: string }) => `API token ${p.name} bound to a machine`,
  'client.registered': (p: { hostname: string; platform: string; client_version: string; peer_name: string }) =>
    `Desktop client ${p.hostname} (${p.platform}, ${p.client_version}) registered as peer "${p.peer_name}"`,
  'client.machine_forgotten': (p: { hostname: string; token: string; peer_deleted: boolean }) =>
    `Machine ${p.hostname} of API token ${p.token} forgotten${p.peer_deleted ? ' (its peer was deleted)' : ''}`,
  'client.settings_changed': () => 'Desktop-client settings changed',
  // activity: settings, mail, proxy, logs
  'settings.default_theme': (p: { theme: string }) => `Default theme set to ${p.theme}`,
  'settings.lockout': () => 'Lockout settings changed',
  'settings.second_factor_policy': (p: { required: boolean }) =>
    p.required ? 'A second factor is now required for every account' : 'A second factor is now optional',
  'settings.monitoring_interval': (p: { interval_seconds: number }) => `Uptime monitoring interval set to ${p.interval_seconds} s`,
  'settings.logs_cleared': () => 'Logs cleared',
  'settings.network': (p: { public_host: string; tls_mode: string }) => `Network settings saved (public host ${p.public_host}, TLS ${p.tls_mode})`,
  'settings.default_site': (p: { mode: string }) => `Default site set to ${p.mode}`,
  'settings.network_setup_skipped': () => 'Network set-up step skipped (the environment and the hostname apply)',
  'settings.field.wildcard_routes_need_internal_tls': (p: { count: number }) =>
    `${p.count} HTTPS route(s) with a wildcard domain need internal TLS (ACME HTTP and TLS-ALPN challenges cannot issue wildcard certificates)`,
  'smtp.saved': (p: { host: string; port: number }) => `SMTP settings saved (${p.host}:${p.port})`,
  'smtp.test_sent': (p: { to: string }) => `SMTP test mail sent to ${p.to}`,
  'smtp.test_failed': (p: { to: string }) => `SMTP test mail to ${p.to} failed`,
  'proxy.reloaded': () => 'Proxy configuration reloaded',
  // activity: webhooks
  'webhook.created': (p: { name: string; event_kinds: number }) => `Webhook "${p.name}" created (${p.event_kinds} event kinds)`,
  'webhook.updated': (p: { name: string; fields: string[] }) => `Webhook "${p.name}" updated (${p.fields.join(', ')})`,
  'webhook.enabled': (p: { name: string }) => `Webhook "${p.name}" enabled`,
  'webhook.disabled': (p: { name: string }) => `Webhook "${p.name}" disabled`,
  'webhook.deleted': (p: { name: string }) => `Webhook "${p.name}" deleted`,
  'webhook.delivery_failed': (p: { name: string; event: string; attempts: number; error: string | null }) =>
    `Webhook "${p.name}": delivery of ${p.event} failed after ${p.attempts} attempt(s)${p.error ? `: ${p.error}` : ''}`,
} satisfies Catalogue;
