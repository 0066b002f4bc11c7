// One answer names every bad field of a form: a body whose schema refuses some fields also names
// the fields the stored state refuses (a name taken, a group or user that does not exist, a wrong
// current password: the endpoints' storedChecks), and a valid body with several such problems gets
// them all in one 409/422. Nothing is written by any of these requests.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, apiToken, bearer, login, type TestServer } from './lib/server.js';
import type { Refusal } from './lib/api-types.js';

let s: TestServer;
let h: Record<string, string>;
const api = <T = never, P extends string = string, M extends string = 'GET'>(p: P, method?: [T] extends [never] ? M : string, json?: unknown, headers = h) =>
  s.req<T, `/api/v1${P}`, M>(`/api/v1${p}`, { method, json, headers: { ...headers } });

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
  h = bearer(await apiToken(s));
});
after(async () => s.close());

/** Sends the body and checks the status and that `fields` names exactly these fields, each with its code. */
async function refused(p: string, method: string, body: unknown, status: number, expect: Record<string, string>, headers = h) {
  const r = await api<Refusal>(p, method, body, headers);
  assert.equal(r.status, status, JSON.stringify(r.data));
  assert.deepEqual(Object.keys(r.data.fields ?? {}).sort(), Object.keys(expect).sort(), JSON.stringify(r.data));
  for (const [k, code] of Object.entries(expect)) assert.equal(r.data.field_codes![k].code, code, `${k}: ${JSON.stringify(r.data.field_codes![k])}`);
  return r;
}

describe('every bad field in one answer', () => {
  test('peers: a taken name and a missing group beside the schema errors (create and update); both stored problems of a valid body in one 409', async () => {
    const taken = (await api('/peers', 'POST', { name: 'fe-taken' })).data.peer;
    const mine = (await api('/peers', 'POST', { name: 'fe-mine' })).data.peer;
    const before = (await api('/peers?limit=1000')).data.total_all;
    await refused('/peers', 'POST', { name: 'FE-TAKEN', group_id: 999999, dns: 'not a dns list!!' }, 400, {
      name: 'peer.field.name_taken',
      group_id: 'peer.field.no_such_group',
      dns: 'schema.dns_servers_or_search_domains',
    });
    await refused('/peers', 'POST', { name: 'fe-taken', group_id: 999999 }, 409, { name: 'peer.field.name_taken', group_id: 'peer.field.no_such_group' });
    await refused(`/peers/${mine.id}`, 'PUT', { name: 'fe-taken', group_id: 999999, dns: 'not a dns list!!' }, 400, {
      name: 'peer.field.name_taken',
      group_id: 'peer.field.no_such_group',
      dns: 'schema.dns_servers_or_search_domains',
    });
    await refused(`/peers/${mine.id}`, 'PUT', { name: 'fe-taken', group_id: 999999 }, 409, {
      name: 'peer.field.name_taken',
      group_id: 'peer.field.no_such_group',
    });
    // its own name (in another case) is no conflict
    await refused(`/peers/${mine.id}`, 'PUT', { name: 'FE-MINE', dns: 'not a dns list!!' }, 400, { dns: 'schema.dns_servers_or_search_domains' });
    assert.equal((await api('/peers?limit=1000')).data.total_all, before, 'nothing created');
    assert.equal((await api(`/peers/${mine.id}`)).data.peer.name, 'fe-mine', 'nothing changed');
    assert.equal((await api(`/peers/${taken.id}`)).data.peer.name, 'fe-taken');
  });

  test('peer groups: a taken name beside a bad colour (create and update)', async () => {
    await api('/peer-groups', 'POST', { name: 'FE Office' });
    const lab = (await api('/peer-groups', 'POST', { name: 'FE Lab' })).data.group;
    await refused('/peer-groups', 'POST', { name: 'fe office', color: 'blue' }, 400, { name: 'group.field.name_taken', color: 'schema.a_hex_colour' });
    await refused(`/peer-groups/${lab.id}`, 'PUT', { name: 'FE OFFICE', color: 'blue' }, 400, { name: 'group.field.name_taken', color: 'schema.a_hex_colour' });
    const groups = (await api('/peer-groups')).data.groups.map((g: { name: string; color: string | null }) => `${g.name}:${g.color}`).sort();
    assert.deepEqual(groups, ['FE Lab:null', 'FE Office:null']);
  });

  test('users: a name in use beside a bad email and a short password; on update beside the last admin losing the role', async () => {
    await api('/users', 'POST', { username: 'fe-user', password: 'password-long-1', role: 'user' });
    const before = (await api('/users')).data.users.length;
    await refused('/users', 'POST', { username: 'FE-USER', password: 'short', role: 'admin', email: 'nope' }, 400, {
      username: 'user.field.in_use',
      password: 'field.min_chars',
      email: 'field.email',
    });
    assert.equal((await api('/users')).data.users.length, before, 'nothing created');
    const admin = (await api('/users')).data.users.find((u: { username: string }) => u.username === 'admin');
    await refused(`/users/${admin!.id}`, 'PUT', { username: 'fe-user', email: 'nope', role: 'user' }, 400, {
      username: 'user.field.in_use',
      email: 'field.email',
      role: 'user.field.one_admin_remains',
    });
    await refused(`/users/${admin!.id}`, 'PUT', { username: 'fe-user', role: 'user' }, 409, {
      username: 'user.field.in_use',
      role: 'user.field.one_admin_remains',
    });
    const after = (await api(`/users/${admin!.id}`)).data.user;
    assert.deepEqual({ username: after.username, role: after.role }, { username: 'admin', role: 'admin' });
  });

  test('own password: a wrong current password beside a too short new one', async () => {
    const { cookie, csrf } = await login(s);
    const session = { cookie, 'x-csrf-token': csrf };
    await refused(
      '/settings/password',
      'PUT',
      { current: 'not-the-password', next: 'short' },
      400,
      { current: 'field.does_not_match', next: 'field.min_chars' },
      session,
    );
    // the right current password is not named
    await refused('/settings/password', 'PUT', { current: 'admin-password-1', next: 'short' }, 400, { next: 'field.min_chars' }, session);
    assert.equal((await login(s)).cookie.length > 0, true, 'the password is unchanged');
  });

  test('tokens: an unknown user beside a missing scope; a past expiry and an unknown user of a valid body in one 422', async () => {
    const before = (await api('/tokens')).data.tokens.length;
    await refused('/tokens', 'POST', { name: 'fe', scopes: [], user_id: 999999 }, 400, { scopes: 'schema.at_least_one_scope', user_id: 'field.no_such_user' });
    await refused('/tokens', 'POST', { name: 'fe', scopes: ['logs'], user_id: 999999, expires_at: 1000 }, 422, {
      user_id: 'field.no_such_user',
      expires_at: 'field.in_future',
    });
    assert.equal((await api('/tokens')).data.tokens.length, before, 'nothing created');
  });

  test('RDP routes: the fields the access mode requires beside a missing name; a name in use beside them', async () => {
    await refused('/rdp', 'POST', { access_mode: 'gateway' }, 400, {
      name: 'field.required',
      gateway_peer_id: 'rdp.field.gateway_peer_required',
      target_host: 'rdp.field.target_required_gateway',
      listen_port: 'rdp.field.listen_port_required',
    });
    const made = await api('/rdp', 'POST', { name: 'FE desk', access_mode: 'external', target_host: 'desk.example.com' });
    assert.equal(made.status, 201, JSON.stringify(made.data));
    await refused('/rdp', 'POST', { name: 'FE desk', access_mode: 'both', wol_enabled: true }, 422, {
      name: 'field.already_taken',
      target_host: 'rdp.field.target_required_both',
      external_host: 'rdp.field.external_host_required',
      wol_mac: 'route.field.wol_mac_required',
    });
    assert.equal((await api('/rdp')).data.routes.length, 1, 'nothing created');
  });

  // a schedule no cron reads is a rule the document cannot state (422): the taken name joins it
  test('backup jobs: a taken name beside a bad schedule', async () => {
    const ok = await api('/settings/autobackup', 'POST', {
      name: 'FE nightly',
      schedule: 'daily',
      keep: 3,
      target: 'local',
      passphrase: 'a-long-passphrase-1',
    });
    assert.equal(ok.status, 201, JSON.stringify(ok.data));
    await refused(
      '/settings/autobackup',
      'POST',
      { name: 'fe NIGHTLY', schedule: 'sometimes', keep: 3, target: 'local', passphrase: 'a-long-passphrase-1' },
      422,
      {
        name: 'field.already_taken',
        schedule: 'schema.daily_weekly_or_a_cron_expression',
      },
    );
    assert.equal((await api('/settings/autobackup')).data.jobs.length, 1, 'nothing created');
  });
});
