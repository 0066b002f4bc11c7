// What a backup document holds: one section per table (the registry below), and every other table of
// the database named in EXCLUDED_TABLES with the reason it is left out. sidecar/test/backup-coverage.test.ts
// fails when a table (or a column of a covered table) is in neither, so a new table cannot be
// forgotten: add a section here (secrets declared, see `secrets`) or exclude it with a reason.
//
// Rows travel as the table holds them (every column, ids included), normalized to JSON types
// (booleans as true/false, times as epoch ms). A `replace` restore writes them back with their ids;
// a `merge` restore matches them to existing rows by `identity` and maps the references between
// sections (`refs`) to the ids they get.
import type { Models } from '../db/models.js';
import type { M } from '../db/define.js';
import { SERVER_KEY_SETTING } from '../wireguard/service.js';
import { SMTP_SETTING_KEY } from '../smtp/service.js';

/**
 * How a secret column is stored, and so how it travels:
 * - master: sealed with the server's master key (util/crypto.ts) - opened and sealed under the
 *   passphrase for the document, and sealed with the NEW master key on restore;
 * - hash: a one-way hash (argon2id, bcrypt, SHA-256) - not readable, but still sealed under the
 *   passphrase so that nobody holding the file can run guesses against it.
 */
export type SecretKind = 'master' | 'hash';

export type Row = Record<string, unknown>;

/** How a column refers to another section's rows (Section.refs). */
export interface SectionRef {
  section: string;
  list?: boolean;
  key?: string;
  commas?: boolean;
  /**
   * with `key`: the live data may name rows that are gone (nothing refuses deleting them), so a
   * document is not refused for it; a merge maps the ids it knows and drops the objects whose id it
   * does not know (they would otherwise name whatever row has that id on this server)
   */
  loose?: boolean;
}

/** The ids a reference column's value names (null: not of the ref's form). */
export function refIds(ref: SectionRef, value: unknown): unknown[] | null {
  if (ref.commas) return String(value).split(',').filter(Boolean);
  if (!ref.list && !ref.key) return [value];
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(value));
  } catch {
    return null;
  }
  if (ref.list) return Array.isArray(parsed) ? parsed : [parsed];
  if (!Array.isArray(parsed)) return null;
  const key = ref.key!;
  return parsed.filter((o): o is Row => o !== null && typeof o === 'object' && key in o).map((o) => o[key]);
}

/** A reference column's value with each id replaced by `to(id)` (a merge restore: the ids of this server). */
export function mapRefIds(ref: SectionRef, value: unknown, to: (id: unknown) => unknown): unknown {
  if (ref.commas) {
    const ids = (refIds(ref, value) ?? []).map((x) => Number(to(x))).sort((a, b) => a - b);
    return ids.length ? `,${ids.join(',')},` : value;
  }
  if (ref.list) return JSON.stringify((JSON.parse(String(value)) as unknown[]).map(to));
  if (ref.key) {
    const key = ref.key;
    const out: unknown[] = [];
    for (const o of JSON.parse(String(value)) as unknown[]) {
      if (o === null || typeof o !== 'object' || !(key in o)) out.push(o);
      else {
        const id = to((o as Row)[key]);
        if (id !== undefined) out.push({ ...o, [key]: id });
      }
    }
    return JSON.stringify(out);
  }
  return to(value);
}

export interface Section {
  /** the section's name in the document */
  name: string;
  table: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- reason: the sections list models of different row types, and a Sequelize model type is invariant in its row
  model: (m: Models) => M<any>;
  /** primary key column */
  pk: string;
  /** the primary key is assigned by the database (autoincrement): a merge lets it assign new ones */
  autoId: boolean;
  /**
   * column -> the section whose primary key it holds. The column holds one id, or (`list`) a JSON
   * array of ids, or (`key`) a JSON array of objects whose `key` holds an id (objects without it
   * stay as they are), or (`commas`) ids between commas (",3,5,", kept in ascending order).
   */
  refs?: Record<string, SectionRef>;
  /** columns holding secrets (see SecretKind) */
  secrets?: Record<string, SecretKind>;
  /**
   * Secrets inside a row that no column declaration can describe (the settings table's JSON values):
   * turns every secret of the row into its plaintext (out) or back into its stored form (in).
   */
  rowSecrets?: { out(row: Row, open: (kind: SecretKind, v: string) => string): Row; in(row: Row, seal: (kind: SecretKind, v: string) => string): Row };
  /** columns set to a fixed value on restore (state of the machine the backup came from) */
  reset?: Record<string, unknown>;
  /** what a merge matches an existing row by (references already mapped to this server's ids) */
  identity: (row: Row) => string;
  /** how a row is named in a dry-run list */
  label: (row: Row) => string;
  /** columns holding the file name of a branding image (the image travels in the document's files) */
  files?: string[];
}

const lower = (v: unknown) => String(v ?? '').toLowerCase();

/** Settings whose JSON value holds a secret sealed with the master key. */
function settingsSecrets(): NonNullable<Section['rowSecrets']> {
  const map = (row: Row, f: (kind: SecretKind, v: string) => string): Row => {
    if (typeof row.value !== 'string') return row;
    if (row.key === SERVER_KEY_SETTING) {
      const v = JSON.parse(row.value) as unknown;
      return typeof v === 'string' ? { ...row, value: JSON.stringify(f('master', v)) } : row;
    }
    if (row.key === SMTP_SETTING_KEY) {
      const v = JSON.parse(row.value) as Record<string, unknown> | null;
      if (v && typeof v === 'object' && typeof v.password === 'string' && v.password)
        return { ...row, value: JSON.stringify({ ...v, password: f('master', v.password) }) };
    }
    return row;
  };
  return { out: map, in: map };
}

/** The sections, in the order a restore writes them (every section after the ones it refers to). */
export const SECTIONS: readonly Section[] = [
  {
    name: 'users',
    table: 'users',
    model: (m) => m.User,
    pk: 'id',
    autoId: true,
    secrets: { password_hash: 'hash' },
    identity: (r) => lower(r.username),
    label: (r) => String(r.username),
  },
  {
    name: 'settings',
    table: 'settings',
    model: (m) => m.Setting,
    pk: 'key',
    autoId: false,
    rowSecrets: settingsSecrets(),
    identity: (r) => String(r.key),
    label: (r) => String(r.key),
  },
  {
    name: 'peer_groups',
    table: 'peer_groups',
    model: (m) => m.PeerGroup,
    pk: 'id',
    autoId: true,
    identity: (r) => lower(r.name),
    label: (r) => String(r.name),
  },
  {
    name: 'tags',
    table: 'tags',
    model: (m) => m.Tag,
    pk: 'id',
    autoId: true,
    identity: (r) => String(r.name_lower),
    label: (r) => String(r.name),
  },
  {
    name: 'peers',
    table: 'peers',
    model: (m) => m.Peer,
    pk: 'id',
    autoId: true,
    refs: { group_id: { section: 'peer_groups' } },
    secrets: { private_key_enc: 'master', preshared_key_enc: 'master' },
    // the raw WireGuard counters of the old interface mean nothing to the new one (the poller adds deltas)
    reset: { last_raw_rx: 0, last_raw_tx: 0 },
    identity: (r) => String(r.public_key),
    label: (r) => String(r.name),
  },
  {
    name: 'gateways',
    table: 'gateways',
    model: (m) => m.Gateway,
    pk: 'peer_id',
    autoId: false,
    refs: { peer_id: { section: 'peers' } },
    secrets: { api_token_hash: 'hash', push_token_enc: 'master' },
    identity: (r) => String(r.peer_id),
    label: (r) => `gateway of peer ${String(r.peer_id)}`,
  },
  {
    // custom certificates: the private key stays sealed (opened under the passphrase in the document)
    name: 'certificates',
    table: 'certificates',
    model: (m) => m.Certificate,
    pk: 'id',
    autoId: true,
    secrets: { private_key_enc: 'master' },
    identity: (r) => lower(r.name),
    label: (r) => String(r.name),
  },
  {
    name: 'routes',
    table: 'routes',
    model: (m) => m.Route,
    pk: 'id',
    autoId: true,
    refs: {
      peer_id: { section: 'peers' },
      target_peer_id: { section: 'peers' },
      acl_peer_ids: { section: 'peers', list: true },
      user_ids: { section: 'users', list: true },
      certificate_id: { section: 'certificates' },
      // several backends (routes/traffic.ts): the peers inside the JSON list, and its ",3,5," index
      backends: { section: 'peers', key: 'peer_id' },
      backend_peer_ids: { section: 'peers', commas: true },
      // mirror targets on peers ({peer_id, port}; {url} ones have no id): deleting a peer leaves them
      mirror_targets: { section: 'peers', key: 'peer_id', loose: true },
    },
    secrets: { basic_auth_password_hash: 'hash' },
    identity: (r) => (r.route_type === 'l4' ? `l4:${String(r.l4_protocol)}:${String(r.l4_listen_port)}` : `http:${lower(r.domain)}`),
    label: (r) => (r.route_type === 'l4' ? `${String(r.domain)} (${String(r.l4_protocol)}/${String(r.l4_listen_port)})` : String(r.domain)),
  },
  {
    name: 'redirect_hosts',
    table: 'redirect_hosts',
    model: (m) => m.RedirectHost,
    pk: 'id',
    autoId: true,
    identity: (r) => lower(r.domain),
    label: (r) => `${String(r.domain)} → ${String(r.target_url)}`,
  },
  // before route_auth: method oidc names a provider (route_auth.oidc_provider_id)
  {
    name: 'oidc_providers',
    table: 'oidc_providers',
    model: (m) => m.OidcProvider,
    pk: 'id',
    autoId: true,
    secrets: { client_secret_enc: 'master' },
    identity: (r) => lower(r.name),
    label: (r) => String(r.name),
  },
  {
    name: 'route_auth',
    table: 'route_auth',
    model: (m) => m.RouteAuth,
    pk: 'id',
    autoId: true,
    refs: { route_id: { section: 'routes' }, oidc_provider_id: { section: 'oidc_providers' } },
    secrets: { password_hash: 'hash', totp_secret: 'master', totp_pending_secret: 'master' },
    files: ['logo', 'bg_image'],
    identity: (r) => String(r.route_id),
    label: (r) => `route auth of route ${String(r.route_id)}`,
  },
  {
    name: 'route_auth_user_totp',
    table: 'route_auth_user_totp',
    model: (m) => m.RouteAuthUserTotp,
    pk: 'id',
    autoId: true,
    refs: { route_id: { section: 'routes' }, user_id: { section: 'users' } },
    secrets: { totp_secret: 'master', totp_pending_secret: 'master' },
    identity: (r) => `${String(r.route_id)}:${String(r.user_id)}`,
    label: (r) => `second factor of user ${String(r.user_id)} on route ${String(r.route_id)}`,
  },
  {
    name: 'share_links',
    table: 'share_links',
    model: (m) => m.ShareLink,
    pk: 'id',
    autoId: true,
    refs: { route_id: { section: 'routes' }, created_by: { section: 'users' } },
    secrets: { token_hash: 'hash' },
    identity: (r) => String(r.token_hash),
    label: (r) => `share link ${String(r.id)} of route ${String(r.route_id)}${r.note ? ` (${String(r.note)})` : ''}`,
  },
  {
    // an account's TOTP: the secret sealed with the master key (a restore on another server re-seals it)
    name: 'user_totp',
    table: 'user_totp',
    model: (m) => m.UserTotp,
    pk: 'id',
    autoId: true,
    refs: { user_id: { section: 'users' } },
    secrets: { secret: 'master', pending_secret: 'master' },
    identity: (r) => String(r.user_id),
    label: (r) => `TOTP of user ${String(r.user_id)}`,
  },
  {
    name: 'user_recovery_codes',
    table: 'user_recovery_codes',
    model: (m) => m.UserRecoveryCode,
    pk: 'id',
    autoId: true,
    refs: { user_id: { section: 'users' } },
    secrets: { code_hash: 'hash' },
    identity: (r) => String(r.code_hash),
    label: (r) => `recovery code of user ${String(r.user_id)}`,
  },
  {
    // an account's passkeys: public keys only (the private key never leaves the authenticator); they
    // work after a restore only on a server with the same admin origin (the RP ID they are bound to)
    name: 'user_passkeys',
    table: 'user_passkeys',
    model: (m) => m.UserPasskey,
    pk: 'id',
    autoId: true,
    refs: { user_id: { section: 'users' } },
    identity: (r) => String(r.credential_id),
    label: (r) => `passkey ${String(r.name)} of user ${String(r.user_id)}`,
  },
  {
    name: 'api_tokens',
    table: 'api_tokens',
    model: (m) => m.ApiToken,
    pk: 'id',
    autoId: true,
    refs: { user_id: { section: 'users' }, peer_id: { section: 'peers' }, created_by: { section: 'users' } },
    secrets: { token_hash: 'hash' },
    identity: (r) => String(r.token_hash),
    label: (r) => String(r.name),
  },
  {
    // desktop-client machines: the token (by its hash) and the machine fingerprint's SHA-256 identify one
    name: 'client_machines',
    table: 'client_machines',
    model: (m) => m.ClientMachine,
    pk: 'id',
    autoId: true,
    refs: { token_id: { section: 'api_tokens' }, peer_id: { section: 'peers' } },
    identity: (r) => `${String(r.token_id)}:${String(r.fingerprint)}`,
    label: (r) => `machine ${String(r.hostname)} of token ${String(r.token_id)}`,
  },
  {
    name: 'webhooks',
    table: 'webhooks',
    model: (m) => m.Webhook,
    pk: 'id',
    autoId: true,
    secrets: { secret_enc: 'master' },
    identity: (r) => `${String(r.name)}|${String(r.url)}`,
    label: (r) => String(r.name),
  },
  {
    // accounts linked to a provider's subject: a restored server signs the same people in as the same accounts
    name: 'oidc_identities',
    table: 'oidc_identities',
    model: (m) => m.OidcIdentity,
    pk: 'id',
    autoId: true,
    refs: { provider_id: { section: 'oidc_providers' }, user_id: { section: 'users' } },
    identity: (r) => `${String(r.provider_id)}|${String(r.subject)}`,
    label: (r) => `link of user ${String(r.user_id)} to provider ${String(r.provider_id)}`,
  },
  {
    name: 'backup_jobs',
    table: 'backup_jobs',
    model: (m) => m.BackupJob,
    pk: 'id',
    autoId: true,
    secrets: { s3_secret_enc: 'master', passphrase_enc: 'master' },
    identity: (r) => lower(r.name),
    label: (r) => String(r.name),
  },
  {
    // the server's RDP key pairs: the private halves stay sealed (opened under the passphrase in the
    // document, sealed with the new master key on restore), so restored envelopes still open
    name: 'rdp_server_keys',
    table: 'rdp_server_keys',
    model: (m) => m.RdpServerKey,
    pk: 'kid',
    autoId: false,
    secrets: { private_key_sealed: 'master' },
    identity: (r) => String(r.kid),
    label: (r) => `RDP key ${String(r.kid)}${r.retired_at === null || r.retired_at === undefined ? ' (current)' : ' (retired)'}`,
  },
  {
    // credentials_envelope is ciphertext for an RDP key (not the master key): it travels as it is
    name: 'rdp_routes',
    table: 'rdp_routes',
    model: (m) => m.RdpRoute,
    pk: 'id',
    autoId: true,
    refs: {
      target_peer_id: { section: 'peers' },
      gateway_peer_id: { section: 'peers' },
      gateway_l4_route_id: { section: 'routes' },
      allowed_user_ids: { section: 'users', list: true },
    },
    identity: (r) => lower(r.name),
    label: (r) => String(r.name),
  },
  {
    name: 'rdp_sessions',
    table: 'rdp_sessions',
    model: (m) => m.RdpSession,
    pk: 'id',
    autoId: true,
    refs: { rdp_route_id: { section: 'rdp_routes' }, token_id: { section: 'api_tokens' }, peer_id: { section: 'peers' }, user_id: { section: 'users' } },
    identity: (r) => `${String(r.rdp_route_id)}|${String(r.started_at)}|${String(r.token_id)}|${String(r.client_name)}`,
    label: (r) => `RDP session ${String(r.id)} of RDP route ${String(r.rdp_route_id)}`,
  },
];

/** Tables a backup leaves out, each with the reason. */
export const EXCLUDED_TABLES: Readonly<Record<string, string>> = {
  SequelizeMeta: 'migration bookkeeping: the restoring server has its own schema version',
  sqlite_sequence: 'SQLite internal (autoincrement counters; they follow the restored ids)',
  sessions: 'admin sign-ins: a restored server asks everyone to sign in again (replace ends them)',
  login_attempts: 'failed-login counters for the lockout: short-lived, tied to the old server',
  rate_limits: "a cluster's shared per-address request counters: short-lived windows of minutes",
  activity_log: 'history, not configuration; it can be exported as CSV from the activity log',
  access_log: 'per-request history from Caddy, not configuration',
  access_log_cursor: "position in this machine's Caddy access-log file",
  peer_traffic: 'traffic history (charts); rebuilt by the WireGuard poller',
  route_checks: 'uptime-check history; rebuilt by the monitor',
  route_auth_sessions: 'visitor sign-ins on protected routes: visitors sign in again',
  route_auth_codes: 'one-time e-mail codes that expire within minutes',
  route_auth_oidc_flows: 'OpenID Connect sign-ins on protected routes waiting for their callback: they expire within 10 minutes (visitors start again)',
  peer_config_links: 'one-time download links: short-lived, and a restore must not bring back a link that was used, revoked or sent to someone',
  webhook_deliveries: "delivery log and queue: history, and deliveries owed by the old server's events",
  cluster_nodes: 'the nodes of a cluster as they run now (heartbeats, the leader): rebuilt by the running nodes',
};
