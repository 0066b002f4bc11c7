// Secrets by credential: on a running sidecar that holds every kind of secret,
// - every endpoint that declares it discloses secrets (`secrets` in sidecar/src/http/registry.ts) is
//   called with every credential: a token of each scope alone, a token with every scope but
//   full-access, a session of each role. Only the full-access token and the admin session pass (for
//   the caller's own account's secrets, sessionOnly: every session and no token); the others get 403,
//   their answers hold none of the secrets, and nothing changed. The ones that pass really answer (2xx).
// - every read that is not so marked is called with full access, and its answer holds none of the
//   secrets the server holds;
// - no answer schema of an unmarked endpoint has a field named like a secret.
// The endpoints come from the server's own list, so new ones are covered without editing this file;
// ids in paths are those of real resources holding secrets (by the path's first segments).
//   node --import tsx --test test/security/secrets-by-credential.test.ts
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { startTestServer, apiToken, login, bearer, ADMIN, type TestServer } from '../../sidecar/test/lib/server.js';
import { fullPath, SCOPES, type Endpoint } from '../../sidecar/src/http/registry.js';
import { PASSPHRASE_HEADER } from '../../sidecar/src/backup/endpoints.js';
import { parseEnvText } from '@gatehouse/common/gateway-protocol.js';
import type { BackupJob, Peer, Token, User } from '../../sidecar/test/lib/protocol.js';
import { at, str } from '../lib/json.js';
import { softwarePasskey } from '../../sidecar/test/lib/software-passkey.js';
import { totpCode } from '../../sidecar/src/util/totp.js';

let s: TestServer;
/** Every secret the server holds (plaintext), with what it is. */
const secrets: { kind: string; value: string }[] = [];
const keep = (kind: string, value: unknown) => {
  assert.equal(typeof value, 'string', kind);
  assert.ok((value as string).length >= 8, kind);
  secrets.push({ kind, value: value as string });
};
/** Real resources: the id each path segment's `:id` stands for. */
const ids: Record<string, number> = {};
interface Credential {
  name: string;
  headers: Record<string, string>;
  passes: boolean;
  /** a session's: its user's password (the own-account endpoints ask for it) */
  password?: string;
}
const credentials: Credential[] = [];
/** Whether a credential passes an endpoint that discloses secrets. */
const passes = (e: Endpoint, c: Credential) => (e.sessionOnly ? c.password !== undefined : c.passes);
/** The TOTP secret each session's last set-up answered (for the activation that follows it). */
const pendingTotp = new Map<string, string>();
const BACKUP_PASSPHRASE = 'caller-chosen-passphrase-24';
const PASSKEY_ORIGIN = 'https://gate.secrets.example.test';
const VICTIM = { username: 'secrets-victim', password: 'victim-password-24' };
const VIEWER = { username: 'secrets-viewer', password: 'viewer-password-24' };
let full: Record<string, string>;
let seq = 0;

before(async () => {
  s = await startTestServer({
    GATEHOUSE_RATE_LIMIT_ADMIN: '1000000',
    GATEHOUSE_RATE_LIMIT_LOGIN: '100000',
    GATEHOUSE_WEBHOOK_ALLOW_PRIVATE: 'true',
    // passkeys need the admin origin (their relying party)
    GATEHOUSE_ADMIN_ORIGIN: PASSKEY_ORIGIN,
  });
  const fullToken = await apiToken(s);
  full = bearer(fullToken);
  keep('full-access API token', fullToken);
  const api = async <T = never, P extends string = string, M extends string = 'GET'>(p: P, method?: [T] extends [never] ? M : string, json?: unknown) => {
    const r = await s.req<T, `/api/v1${P}`, M>(`/api/v1${p}`, { method, json, headers: { ...full, accept: 'application/json' } });
    assert.ok(r.status < 300, `${method ?? 'GET'} ${p}: ${r.status} ${typeof r.data === 'string' ? r.data.slice(0, 200) : JSON.stringify(r.data)}`);
    return r.data;
  };
  const wgKeys = (conf: string, whose: string) => {
    const found = [...conf.matchAll(/(PrivateKey|PresharedKey) = (\S+)/g)];
    assert.equal(found.length, 2, conf);
    for (const [, k, v] of found) keep(`${whose} ${k}`, v);
  };
  // WireGuard: the server's key, a peer's keys, a gateway's keys and tokens
  keep('WireGuard server private key', (await s.deps.wireguard.serverKeys()).privateKey);
  const peer = await api('/peers', 'POST', { name: 'secrets-peer' });
  ids.peers = peer.peer.id;
  wgKeys(String(await api(`/peers/${peer.peer.id}/config`)), 'peer');
  const gw = await api('/peers', 'POST', { name: 'secrets-gw', is_gateway: true, api_port: 8091 });
  ids.gateway = gw.peer.id;
  keep('gateway API token', gw.gateway!.apiToken);
  keep('gateway push token', gw.gateway!.pushToken);
  const env = parseEnvText(gw.gateway!.envContent);
  keep('gateway PrivateKey', env.GATEWAY_WG_PRIVATE_KEY);
  keep('gateway PresharedKey', env.GATEWAY_WG_PRESHARED_KEY);
  // API tokens of every scope (the credentials below) and one more that is only a secret here
  keep('API token', (await api('/tokens', 'POST', { name: 'secrets-other', scopes: ['logs'] })).token);
  for (const sc of SCOPES) {
    const t = await apiToken(s, [sc]);
    keep(`${sc} API token`, t);
    credentials.push({ name: `a ${sc} token`, headers: bearer(t), passes: sc === 'full-access' });
  }
  const narrower = await apiToken(
    s,
    SCOPES.filter((x) => x !== 'full-access'),
  );
  keep('API token with every scope but full-access', narrower);
  credentials.push({ name: 'a token with every scope but full-access', headers: bearer(narrower), passes: false });
  // SMTP password, webhook secret, route-auth password and TOTP secret, basic-auth password
  keep('SMTP password', 'smtp-Secret-by-credential-1');
  await api('/smtp', 'PUT', {
    host: '127.0.0.1',
    port: 2525,
    secure: false,
    user: 'mailer',
    password: 'smtp-Secret-by-credential-1',
    from: 'Gatehouse <gh@example.test>',
  });
  keep('webhook secret', 'webhook-Secret-by-credential-1');
  ids.webhooks = (
    await api('/webhooks', 'POST', {
      name: 'secrets-hook',
      url: 'http://127.0.0.1:9/hook',
      events: ['peer_created'],
      enabled: true,
      secret: 'webhook-Secret-by-credential-1',
    })
  ).webhook.id;
  const r1 = await api('/routes', 'POST', { domain: 'secrets-pw.example.test', peer_id: peer.peer.id, target_port: 8080 });
  keep('route-auth password', 'route-auth-Pass-by-credential-1');
  await api(`/routes/${r1.route.id}/auth`, 'POST', {
    method: 'email_password',
    email: 'owner@example.test',
    password: 'route-auth-Pass-by-credential-1',
    session_max_age: 3_600_000,
  });
  const r2 = await api('/routes', 'POST', { domain: 'secrets-totp.example.test', peer_id: peer.peer.id, target_port: 8081 });
  await api(`/routes/${r2.route.id}/auth`, 'POST', { method: 'totp', email: 'owner@example.test', session_max_age: 3_600_000 });
  keep('route-auth TOTP secret', (await api(`/routes/${r2.route.id}/auth/totp-setup`, 'POST', {})).secret);
  ids.routes = r2.route.id;
  keep('route basic-auth password', 'basic-Pass-by-credential-1');
  await api('/routes', 'POST', {
    domain: 'secrets-basic.example.test',
    peer_id: peer.peer.id,
    target_port: 8082,
    https_enabled: true,
    basic_auth_user: 'visitor',
    basic_auth_password: 'basic-Pass-by-credential-1',
  });
  // an auto-backup job (its passphrase), users (passwords), sessions (ids)
  keep('auto-backup passphrase', 'autobackup-passphrase-by-credential');
  ids['settings/autobackup'] = (
    await api('/settings/autobackup', 'POST', {
      name: 'secrets-job',
      schedule: 'daily',
      keep: 1,
      target: 'local',
      passphrase: 'autobackup-passphrase-by-credential',
    })
  ).job.id;
  keep('backup passphrase', BACKUP_PASSPHRASE);
  ids.users = (await api('/users', 'POST', { ...VICTIM, role: 'user' })).user.id;
  keep('user password', VICTIM.password);
  await api('/users', 'POST', { ...VIEWER, role: 'user' });
  keep('user password', VIEWER.password);
  keep('admin password', ADMIN.password);
  ids.tokens = (await api('/tokens')).tokens[0].id;
  ids['peer-groups'] = (await api('/peer-groups', 'POST', { name: 'secrets-group' })).group?.id ?? 987654;
  for (const [role, user] of [
    ['admin', ADMIN],
    ['user', VIEWER],
  ] as const) {
    const sess = await login(s, user);
    const sid = /gatehouse_sid=([^;]+)/.exec(sess.cookie)?.[1];
    keep(`${role} session id`, decodeURIComponent(sid ?? ''));
    credentials.push({
      name: `a session of role ${role}`,
      headers: { cookie: sess.cookie, 'x-csrf-token': sess.csrf },
      passes: role === 'admin',
      password: user.password,
    });
  }
  // the viewer's own second factor: its TOTP secret and recovery codes are secrets the server holds
  const viewer = credentials.find((c) => c.name === 'a session of role user')!;
  const own = <P extends string>(p: P, json: unknown) =>
    s.req<never, `/api/v1${P}`, 'POST'>(`/api/v1${p}`, { method: 'POST', json, headers: { ...viewer.headers, accept: 'application/json' } });
  const setup = await own('/settings/second-factor/totp', { current: VIEWER.password });
  assert.equal(setup.status, 200, JSON.stringify(setup.data));
  keep('admin-UI TOTP secret', setup.data.setup.secret);
  const on = await own('/settings/second-factor/totp/verify', { token: totpCode(setup.data.setup.secret, Date.now()) });
  assert.equal(on.status, 200, JSON.stringify(on.data));
  for (const c of on.data.recovery_codes as string[]) keep('recovery code', c);
});
after(async () => s?.close());

/** The path of an endpoint with the ids of real resources (987654 where there is none). */
function concrete(e: Endpoint): string {
  const p = fullPath(e);
  return p.replace(/:([A-Za-z_]+)/g, (_m, n: string) => {
    if (!/id$/i.test(n)) return 'no-such-thing';
    if (n !== 'id') return '987654';
    if (/^\/api\/v1\/peers\/:id\/gateway-/.test(p)) return String(ids.gateway);
    const rest = p.replace(/^\/api\/v1\//, '');
    const key = Object.keys(ids)
      .filter((k) => rest.startsWith(`${k}/`))
      .sort((a, b) => b.length - a.length)[0];
    return String(key ? ids[key] : 987654);
  });
}

/** A body that makes the endpoint do what it is for (so a credential that wrongly passes would get the secret). */
function bodyFor(e: Endpoint, c?: Credential): unknown {
  const n = ++seq;
  switch (`${e.method} ${e.path}`) {
    case 'POST /settings/second-factor/totp':
    case 'POST /settings/second-factor/recovery-codes':
      return { current: c?.password ?? 'not-this-password' };
    case 'POST /settings/second-factor/totp/verify': {
      const secret = c && pendingTotp.get(c.name);
      return { token: secret ? totpCode(secret, Date.now()) : '000000' };
    }
    case 'POST /peers':
      return { name: `secrets-new-gw-${n}`, is_gateway: true };
    case 'POST /routes/:id/share-links':
      return { expires_at: Date.now() + 86_400_000, note: `secrets-${n}` };
    case 'POST /tokens':
      return { name: `secrets-new-${n}`, scopes: ['full-access'] };
    case 'PUT /smtp':
      return { host: 'mail.attacker.example', port: 25, from: 'x@attacker.example' };
    case 'POST /settings/autobackup':
      return { name: `secrets-new-job-${n}`, schedule: 'daily', keep: 1, target: 'local', passphrase: 'attacker-chosen-passphrase' };
    case 'PUT /settings/autobackup/:id':
      return { passphrase: 'attacker-chosen-passphrase' };
    default:
      return {};
  }
}

/** POST /settings/second-factor/passkeys: a real registration (options for this credential, a software key's answer) when the options are given. */
async function passkeyBody(headers: Record<string, string>, c?: Credential): Promise<unknown> {
  const opts = await s.req('/api/v1/settings/second-factor/passkeys/options', {
    method: 'POST',
    headers: { accept: 'application/json', ...headers },
    json: { current: c?.password ?? 'not-this-password' },
  });
  if (opts.status !== 200) return { name: 'refused', credential: {} };
  return { name: `secrets-key-${++seq}`, credential: softwarePasskey().register(opts.data.options, PASSKEY_ORIGIN) };
}

const call = async (e: Endpoint, headers: Record<string, string>, c?: Credential) => {
  const json = e.method === 'POST' && e.path === '/settings/second-factor/passkeys' ? await passkeyBody(headers, c) : bodyFor(e, c);
  const r = await s.req(concrete(e), {
    method: e.method,
    headers: { accept: 'application/json', [PASSPHRASE_HEADER]: BACKUP_PASSPHRASE, ...headers },
    ...(e.method === 'GET' ? {} : { json }),
  });
  const secret = at(r.data, 'setup', 'secret');
  if (c && typeof secret === 'string') pendingTotp.set(c.name, secret);
  return r;
};

/** Every secret found in an answer (body and headers). */
function leaked(r: Response & { data: unknown }): string[] {
  const text = `${typeof r.data === 'string' ? r.data : JSON.stringify(r.data)}\n${[...r.headers.entries()].map(([k, v]) => `${k}: ${v}`).join('\n')}`;
  return secrets.filter((x) => text.includes(x.value)).map((x) => x.kind);
}

/** What the server holds that a refused call must not change (not what every call changes, such as a token's last use). */
async function state(): Promise<string> {
  const get = async <P extends string>(p: P) => (await s.req<never, `/api/v1${P}`, 'GET'>(`/api/v1${p}`, { headers: full })).data;
  const gw = (await get(`/peers/${ids.gateway}/gateway-info`)).gateway;
  return JSON.stringify({
    tokens: (await get('/tokens')).tokens.map((t: Token) => [t.id, t.name]),
    peers: (await get('/peers?limit=1000')).peers.map((p: Peer) => [p.id, p.updated_at]),
    gateway: [at(gw, 'token_hint'), at(gw, 'tokens_issued_at')],
    smtp: (await get('/smtp')).smtp,
    jobs: (await get('/settings/autobackup')).jobs.map((j: BackupJob) => [j.id, j.updated_at, j.last_run]),
    users: (await get('/users')).users.map((u: User) => [u.id, u.must_change_password, u.updated_at]),
    route: (await get(`/routes/${ids.routes}/auth`)).route_auth?.updated_at ?? null,
  });
}

test(
  'every endpoint that discloses secrets × every credential: only a full-access token and an admin session pass; a refused answer holds no secret and changes nothing',
  { timeout: 180_000 },
  async () => {
    // the own-account ones in the order they work in: a TOTP set up, activated, then new recovery codes
    const ownOrder = (e: Endpoint) =>
      ['/settings/second-factor/totp', '/settings/second-factor/totp/verify', '/settings/second-factor/recovery-codes'].indexOf(e.path);
    const marked = s.endpoints.filter((e) => e.secrets).sort((a, b) => ownOrder(a) - ownOrder(b));
    assert.ok(marked.length >= 10, `marked endpoints: ${marked.length}`);
    assert.ok(
      marked.some((e) => e.method === 'GET' && e.path === '/settings/backup'),
      'the backup download is marked',
    );
    assert.equal(credentials.length, SCOPES.length + 3);
    // first every refused call (each would disclose, were it allowed), then nothing may have changed
    const before = await state();
    let refused = 0;
    for (const e of marked) {
      for (const c of credentials.filter((x) => !passes(e, x))) {
        const label = `${e.method} ${fullPath(e)} with ${c.name}`;
        const r = await call(e, c.headers, c);
        assert.equal(r.status, 403, `${label}: ${r.status} ${JSON.stringify(r.data).slice(0, 300)}`);
        assert.equal(at(r.data, 'ok'), false, label);
        assert.match(str(at(r.data, 'error')), e.sessionOnly ? /session only/ : /discloses secrets/, label);
        assert.deepEqual(leaked(r), [], `${label}: the refusal holds a secret`);
        refused++;
      }
    }
    assert.equal(await state(), before, 'a refused call changed nothing');
    // the victim's password still works (no refused reset went through)
    await login(s, VICTIM);
    // then the credentials that pass, which get what the endpoint is for
    for (const e of marked) {
      for (const c of credentials.filter((x) => passes(e, x))) {
        const label = `${e.method} ${fullPath(e)} with ${c.name}`;
        const r = await call(e, c.headers, c);
        assert.ok(
          r.status >= 200 && r.status < 300,
          `${label}: ${r.status} ${typeof r.data === 'string' ? r.data.slice(0, 200) : JSON.stringify(r.data).slice(0, 300)}`,
        );
      }
    }
    assert.ok(refused >= marked.length * SCOPES.length, `refused calls: ${refused}`);
  },
);

test('the backup download: a read-only token with a passphrase of its choosing gets 403, not the document (the finding)', async () => {
  const ro = credentials.find((c) => c.name === 'a read-only token')!;
  const r = await s.req('/api/v1/settings/backup', { headers: { ...ro.headers, [PASSPHRASE_HEADER]: BACKUP_PASSPHRASE, accept: 'application/json' } });
  assert.equal(r.status, 403, JSON.stringify(r.data).slice(0, 200));
  assert.ok(!('document' in r.data));
  const ok = await s.req('/api/v1/settings/backup', { headers: { ...full, [PASSPHRASE_HEADER]: BACKUP_PASSPHRASE, accept: 'application/json' } });
  assert.equal(ok.status, 200);
});

test('no read that is not marked answers a secret, even with full access or an admin session', { timeout: 120_000 }, async () => {
  const reads = s.endpoints.filter(
    (e) => e.method === 'GET' && !e.secrets && (e.auth === 'admin' || e.auth === 'public') && e.rawResponse?.contentType !== 'text/event-stream',
  );
  assert.ok(reads.length >= 60, `reads: ${reads.length}`);
  const adminSession = credentials.find((c) => c.name === 'a session of role admin')!;
  let answered = 0;
  for (const e of reads) {
    for (const [who, headers] of [
      ['full access', full],
      ['an admin session', adminSession.headers],
    ] as const) {
      const r = await call(e, headers);
      assert.deepEqual(leaked(r), [], `${e.method} ${concrete(e)} with ${who} (${r.status}) answers a secret`);
      if (r.status === 200) answered++;
    }
  }
  // the walk reached real data, not only 404s
  assert.ok(answered >= reads.length, `answered with 200: ${answered} of ${reads.length * 2}`);
  // control: the check finds a secret where one is
  const config = await s.req(`/api/v1/peers/${ids.peers}/config`, { headers: full });
  assert.ok(leaked(config).length >= 2, 'the peer config holds its keys');
});

/** Field names that hold a secret when they hold a value. */
const SECRET_FIELDS = new Set([
  'password',
  'secret',
  'token',
  'private_key',
  'privateKey',
  'preshared_key',
  'presharedKey',
  'passphrase',
  'apiToken',
  'pushToken',
  'envContent',
  'secret_access_key',
  'api_token',
  'push_token',
  'totp_secret',
]);

/** Whether a JSON schema admits a string (a secret's value; null, booleans and objects are not). */
function holdsText(js: unknown): boolean {
  if (!js || typeof js !== 'object') return false;
  const o = js as { type?: unknown; anyOf?: unknown[]; oneOf?: unknown[] };
  if (o.type === 'string' || (Array.isArray(o.type) && o.type.includes('string'))) return true;
  return [...(o.anyOf ?? []), ...(o.oneOf ?? [])].some(holdsText);
}

function secretFields(js: unknown, at = ''): string[] {
  if (!js || typeof js !== 'object') return [];
  const o = js as Record<string, unknown>;
  const out: string[] = [];
  for (const [k, v] of Object.entries((o.properties as Record<string, unknown>) ?? {})) {
    if (SECRET_FIELDS.has(k) && holdsText(v)) out.push(`${at}${k}`);
    out.push(...secretFields(v, `${at}${k}.`));
  }
  for (const key of ['items', 'additionalProperties']) out.push(...secretFields(o[key], at));
  for (const key of ['anyOf', 'oneOf', 'allOf']) for (const x of (o[key] as unknown[]) ?? []) out.push(...secretFields(x, at));
  return out;
}

test('no answer of an unmarked endpoint declares a field named like a secret (password, secret, token, keys, passphrase, gateway env)', () => {
  const found: string[] = [];
  let walked = 0;
  for (const e of s.endpoints.filter((x) => x.response && x.auth === 'admin')) {
    const fields = secretFields(z.toJSONSchema(e.response!, { io: 'output', unrepresentable: 'any' }));
    walked++;
    if (!e.secrets && fields.length) found.push(`${e.method} ${e.path}: ${fields.join(', ')}`);
  }
  assert.ok(walked >= 50, `answer schemas walked: ${walked}`);
  assert.deepEqual(found, [], 'unmarked endpoints whose answers name a secret field');
  // control: the walk finds the fields where they are
  const tokenCreate = s.endpoints.find((e) => e.method === 'POST' && e.path === '/tokens')!;
  assert.deepEqual(secretFields(z.toJSONSchema(tokenCreate.response!, { io: 'output', unrepresentable: 'any' })), ['token']);
});
