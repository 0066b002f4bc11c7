// GET /api/v1/events: the live event stream, over real HTTP against the started test server.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startTestServer, login, apiToken, bearer, type TestServer } from './lib/server.js';
import { manualClock } from '../src/util/clock.js';
import { sseComment, sseMessage, sseRetry } from '../src/events-stream/sse.js';
import { STREAMED, streamScopesFor } from '../src/events-stream/catalog.js';
import { EventStreams } from '../src/events-stream/hub.js';
import { EventBus } from '../src/events.js';
import { createLogger } from '../src/util/logger.js';
import { at, obj, objAt, objsAt, str, type JsonObject } from '../../test/lib/json.js';
import type { Refusal } from './lib/api-types.js';
import type { Role, Scope } from '../src/http/registry.js';

interface Msg {
  id?: string;
  event: string;
  /** the event's payload as sent (its kind's payload schema; `ready` and `reset` carry their own), read as JSON */
  data: JsonObject;
}

/** An SSE reader on node's http: collects messages and comments as they arrive. */
interface Stream {
  status: number;
  headers: http.IncomingHttpHeaders;
  raw: () => string;
  messages: Msg[];
  comments: string[];
  ended: Promise<void>;
  /** Waits until a message matches (from the start), returns it. */
  waitFor(pred: (m: Msg) => boolean, ms?: number): Promise<Msg>;
  /** Waits until n comments arrived. */
  waitComments(n: number, ms?: number): Promise<void>;
  close(): void;
}

function openStream(s: TestServer, headers: Record<string, string> = {}, query = ''): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${s.url}/api/v1/events${query}`, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      res.setEncoding('utf8');
      let raw = '';
      let buf = '';
      const messages: Msg[] = [];
      const comments: string[] = [];
      const waiters = new Set<() => void>();
      const wake = () => waiters.forEach((w) => w());
      res.on('data', (chunk: string) => {
        raw += chunk;
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const m: Partial<Msg> & { dataLines: string[] } = { dataLines: [] };
          let isComment = false;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) {
              comments.push(line.slice(1).trim());
              isComment = true;
            } else if (line.startsWith('id: ')) m.id = line.slice(4);
            else if (line.startsWith('event: ')) m.event = line.slice(7);
            else if (line.startsWith('data: ')) m.dataLines.push(line.slice(6));
          }
          if (m.event) messages.push({ id: m.id, event: m.event, data: JSON.parse(m.dataLines.join('\n')) });
          else if (!isComment && !block.startsWith('retry:')) throw new Error(`unexpected block ${JSON.stringify(block)}`);
        }
        wake();
      });
      const ended = new Promise<void>((r) => res.once('close', () => (wake(), r())));
      let isEnded = false;
      void ended.then(() => (isEnded = true));
      const until = (check: () => boolean, what: string, ms: number) =>
        new Promise<void>((ok, fail) => {
          const t = setTimeout(() => (waiters.delete(w), fail(new Error(`timeout waiting for ${what}; got ${raw}`))), ms);
          const w = () => {
            if (check()) {
              clearTimeout(t);
              waiters.delete(w);
              ok();
            } else if (isEnded) {
              clearTimeout(t);
              waiters.delete(w);
              fail(new Error(`stream ended waiting for ${what}; got ${raw}`));
            }
          };
          waiters.add(w);
          w();
        });
      resolve({
        status: res.statusCode!,
        headers: res.headers,
        raw: () => raw,
        messages,
        comments,
        ended,
        async waitFor(pred, ms = 5000) {
          let found: Msg | undefined;
          await until(() => !!(found = messages.find(pred)), 'a message', ms);
          return found!;
        },
        waitComments: (n, ms = 5000) => until(() => comments.length >= n, `${n} comments`, ms),
        close: () => req.destroy(),
      });
    });
    req.on('error', reject);
  });
}

/** A plain request whose JSON answer is read (refusals). */
async function refused(s: TestServer, headers: Record<string, string>): Promise<{ status: number; data: Refusal }> {
  const r = await s.req<Refusal>('/api/v1/events', { headers: { accept: 'text/event-stream', ...headers } });
  return { status: r.status, data: r.data };
}

const isDomain = (m: Msg) => m.event !== 'ready' && m.event !== 'reset';

describe('SSE wire format', () => {
  test('messages, comments and retry', () => {
    assert.equal(sseMessage({ id: 'b-1', event: 'peer_created', data: { a: 'x\ny' } }), 'id: b-1\nevent: peer_created\ndata: {"a":"x\\ny"}\n\n');
    assert.equal(sseMessage({ event: 'x', data: 1 }), 'event: x\ndata: 1\n\n');
    assert.throws(() => sseMessage({ id: 'a\nb', event: 'x', data: 1 }));
    assert.equal(sseComment('hi\nthere'), ': hi there\n\n');
    assert.equal(sseRetry(3000), 'retry: 3000\n\n');
  });

  test('scopes: full-access and read-only get everything; peers/routes/logs/system their own; client-only nothing', () => {
    const tok = (scopes: string[], boundRole: Role | null = null) =>
      streamScopesFor({ kind: 'token', tokenId: 1, scopes: scopes as Scope[], userId: null, peerId: null, boundRole });
    assert.deepEqual([...tok(['full-access'])].sort(), ['admin', 'logs', 'peers', 'routes', 'system']);
    assert.deepEqual([...tok(['read-only'])].sort(), ['admin', 'logs', 'peers', 'routes', 'system']);
    assert.deepEqual([...tok(['peers', 'settings'])], ['peers']);
    assert.deepEqual([...tok(['client'])], []);
    assert.deepEqual([...tok(['settings', 'webhooks'])], []);
    assert.deepEqual([...streamScopesFor({ kind: 'session', userId: 2, username: 'u', role: 'user' })].sort(), ['logs', 'peers', 'routes', 'system']);
    // the admin events reach the roles that may read the accounts: viewer and up; a bound token is capped by its user's role
    assert.deepEqual([...streamScopesFor({ kind: 'session', userId: 2, username: 'v', role: 'viewer' })].sort(), [
      'admin',
      'logs',
      'peers',
      'routes',
      'system',
    ]);
    assert.deepEqual([...tok(['full-access'], 'user')].sort(), ['logs', 'peers', 'routes', 'system']);
    assert.deepEqual([...tok(['peers'], 'user')].sort(), ['peers']);
    assert.deepEqual([...tok(['full-access'], 'operator')].sort(), ['admin', 'logs', 'peers', 'routes', 'system']);
    assert.deepEqual([...streamScopesFor({ kind: 'gateway', peerId: 1 })], []);
    for (const t of ['peer_online', 'gateway_offline']) assert.equal(STREAMED[t as keyof typeof STREAMED]?.scope, 'peers');
    for (const t of ['route_down', 'circuit_open']) assert.equal(STREAMED[t as keyof typeof STREAMED]?.scope, 'routes');
    assert.equal(STREAMED.activity_recorded?.scope, 'logs');
    assert.equal(STREAMED.rows_changed, null);
  });
});

describe('the stream hub on its own', () => {
  const log = createLogger('error', true);
  const entry = (id: number, message: string) => ({
    id,
    severity: 'info',
    source: 't',
    event_type: 't',
    message,
    code: null,
    params: null,
    details: null,
    user_id: null,
    ip: null,
    created_at: '',
    timestamp: 0,
  });

  test('in bus order even when an earlier subscriber emits while handling (its event overtakes the first for later subscribers)', async () => {
    const clock = manualClock();
    const bus = new EventBus({ clock, log, boot: 'b' });
    // like the activity log: writes a row for the event and announces it before the event reaches later subscribers
    bus.on('peer_created', async (e) => void (await bus.emit({ type: 'activity_recorded', entry: entry(1, e.name) })));
    const seenBySubscriber: string[] = [];
    bus.onAny((e) => void seenBySubscriber.push(e.type));
    const hub = new EventStreams({ events: bus, clock, timers: clock.timers, log });
    const out = hub.open({ scopes: new Set(['peers', 'logs']) });
    let text = '';
    out.on('data', (d) => (text += d));
    await bus.emit({ type: 'peer_created', peer_id: 1, name: 'p', address: '10.0.0.2', peer_type: 'client', actor: null });
    assert.deepEqual(seenBySubscriber, ['activity_recorded', 'peer_created'], 'the bus delivers the nested event first');
    await new Promise((r) => setImmediate(r));
    const written = [...text.matchAll(/id: (\S+)\nevent: (\S+)/g)].map((m) => `${m[1]} ${m[2]}`);
    assert.deepEqual(written, ['b-0 ready', 'b-1 peer_created', 'b-2 activity_recorded']);
    await hub.closeAll();
  });

  test('transient events (peer_traffic) are written live in id order and never replayed', async () => {
    const clock = manualClock();
    const bus = new EventBus({ clock, log, boot: 't' });
    const hub = new EventStreams({ events: bus, clock, timers: clock.timers, log });
    const out = hub.open({ scopes: new Set(['peers']) });
    let text = '';
    out.on('data', (d) => (text += d));
    const traffic = {
      type: 'peer_traffic' as const,
      interval_s: 10,
      rx_rate: 5,
      tx_rate: 6,
      peers: [{ peer_id: 1, rx_rate: 5, tx_rate: 6, total_rx: 50, total_tx: 60 }],
    };
    // a subscriber ahead of the stream emits a kept event while handling the transient one
    bus.on('peer_traffic', async () => void (await bus.emit({ type: 'peer_online', peer_id: 1, name: 'p', endpoint: null, latest_handshake: null })));
    await bus.emit(traffic, { transient: true });
    await bus.emit({ type: 'peer_offline', peer_id: 1, name: 'p', endpoint: null, latest_handshake: null });
    await new Promise((r) => setImmediate(r));
    const written = () => [...text.matchAll(/id: (\S+)\nevent: (\S+)/g)].map((m) => `${m[1]} ${m[2]}`);
    assert.deepEqual(written(), ['t-0 ready', 't-1 peer_traffic', 't-2 peer_online', 't-3 peer_offline']);
    assert.match(
      text,
      /event: peer_traffic\ndata: \{"interval_s":10,"rx_rate":5,"tx_rate":6,"peers":\[\{"peer_id":1,"rx_rate":5,"tx_rate":6,"total_rx":50,"total_tx":60\}\],"at":\d+\}/,
    );
    const again = hub.open({ scopes: new Set(['peers']), lastEventId: 't-0' });
    let replay = '';
    again.on('data', (d) => (replay += d));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(
      [...replay.matchAll(/id: (\S+)\nevent: (\S+)/g)].map((m) => `${m[1]} ${m[2]}`),
      ['t-2 peer_online', 't-3 peer_offline', 't-3 ready'],
    );
    await hub.closeAll();
  });

  test('a client that does not read is cut off past maxBufferBytes and resumes from its last id', async () => {
    const clock = manualClock();
    const bus = new EventBus({ clock, log, boot: 'c' });
    const hub = new EventStreams({ events: bus, clock, timers: clock.timers, log, maxBufferBytes: 10_000 });
    const out = hub.open({ scopes: new Set(['logs']) });
    const big = 'x'.repeat(2_000);
    for (let i = 1; i <= 10; i++) await bus.emit({ type: 'activity_recorded', entry: entry(i, big) });
    assert.equal(out.writableEnded, true, 'ended');
    assert.equal(hub.size, 0);
    let text = '';
    out.on('data', (d) => (text += d));
    await new Promise((r) => out.once('end', r));
    const ids = [...text.matchAll(/id: (c-\d+)\nevent: activity_recorded/g)].map((m) => m[1]);
    assert.ok(ids.length >= 5 && ids.length < 10, `some written before the cut: ${ids}`);
    const again = hub.open({ scopes: new Set(['logs']), lastEventId: ids[ids.length - 1] });
    let rest = '';
    again.on('data', (d) => (rest += d));
    await new Promise((r) => setImmediate(r));
    const replayed = [...rest.matchAll(/id: (c-\d+)\nevent: activity_recorded/g)].map((m) => m[1]);
    assert.deepEqual(
      [...ids, ...replayed],
      Array.from({ length: 10 }, (_, i) => `c-${i + 1}`),
    );
    await hub.closeAll();
  });
});

describe('GET /api/v1/events', () => {
  let s: TestServer;
  let admin: { cookie: string; csrf: string };
  let full: string;
  const as = () => ({ cookie: admin.cookie, 'x-csrf-token': admin.csrf });
  const newPeer = async (name: string) => {
    const r = await s.req('/api/v1/peers', { method: 'POST', json: { name }, headers: as() });
    assert.equal(r.status, 201, JSON.stringify(r.data));
    return r.data.peer.id as number;
  };
  const newRoute = async (domain: string, peerId: number) => {
    const r = await s.req('/api/v1/routes', { method: 'POST', json: { domain, peer_id: peerId, target_port: 8080 }, headers: as() });
    assert.equal(r.status, 201, JSON.stringify(r.data));
    return r.data.route.id as number;
  };

  before(async () => {
    s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_LOGIN: '100000' });
    admin = await login(s);
    full = await apiToken(s);
  });
  after(async () => s.close());

  test('a session receives peer_created after a POST /peers, as id/event/data with the no-buffering headers', async () => {
    const st = await openStream(s, { cookie: admin.cookie });
    try {
      assert.equal(st.status, 200);
      assert.match(String(st.headers['content-type']), /^text\/event-stream/);
      assert.match(String(st.headers['cache-control']), /no-cache/);
      assert.equal(st.headers['x-accel-buffering'], 'no');
      assert.equal(st.headers['content-encoding'], undefined);
      const ready = await st.waitFor((m) => m.event === 'ready');
      assert.match(st.raw(), /^retry: \d+\n\n/);
      assert.equal(ready.id, s.deps.events.cursor);
      assert.equal(ready.data.resumed, false);
      const id = await newPeer('sse-one');
      const m = await st.waitFor((x) => x.event === 'peer_created');
      assert.equal(m.data.peer_id, id);
      assert.equal(m.data.name, 'sse-one');
      assert.equal(m.data.actor, 1);
      assert.equal(typeof m.data.at, 'number');
      assert.match(m.id!, new RegExp(`^${s.deps.events.boot}-\\d+$`));
      // the activity row of the same change, with the row as the activity log lists it
      const row = await st.waitFor(
        (x) => x.event === 'activity_recorded' && at(x.data, 'entry', 'event_type') === 'peer_created' && at(x.data, 'entry', 'details', 'peer_id') === id,
      );
      const listed = (await s.req('/api/v1/logs/activity?event_type=peer_created&limit=1', { headers: bearer(full) })).data.entries[0];
      assert.deepEqual(row.data.entry, listed);
      // ids strictly increase: the stream is in bus order
      const seqs = st.messages.filter(isDomain).map((x) => Number(x.id!.split('-')[1]));
      assert.deepEqual(
        seqs,
        [...seqs].sort((a, b) => a - b),
      );
      assert.equal(new Set(seqs).size, seqs.length);
    } finally {
      st.close();
    }
  });

  test('a peers token receives peer events but not route events; a routes token the reverse', async () => {
    const peersTok = await apiToken(s, ['peers']);
    const routesTok = await apiToken(s, ['routes']);
    const ps = await openStream(s, bearer(peersTok));
    const rs = await openStream(s, bearer(routesTok));
    try {
      await ps.waitFor((m) => m.event === 'ready');
      await rs.waitFor((m) => m.event === 'ready');
      const p1 = await newPeer('sse-scope-1');
      const routeId = await newRoute('sse-scope.example.test', p1);
      const p2 = await newPeer('sse-scope-2');
      await ps.waitFor((m) => m.event === 'peer_created' && m.data.peer_id === p2);
      await rs.waitFor((m) => m.event === 'route_created' && m.data.route_id === routeId);
      // the full-access admin's own later change is the fence: everything before it has been written
      await newRoute('sse-scope-2.example.test', p2);
      await rs.waitFor((m) => m.event === 'route_created' && m.data.domain === 'sse-scope-2.example.test');
      assert.deepEqual(
        ps.messages.filter(isDomain).map((m) => m.event),
        ['peer_created', 'peer_created'],
      );
      assert.deepEqual(
        ps.messages.filter(isDomain).map((m) => m.data.peer_id),
        [p1, p2],
      );
      assert.deepEqual(
        rs.messages.filter(isDomain).map((m) => m.event),
        ['route_created', 'route_created'],
      );
    } finally {
      ps.close();
      rs.close();
    }
  });

  test('group and tag changes reach peers readers (with their activity rows for logs readers), not routes readers', async () => {
    const ps = await openStream(s, bearer(await apiToken(s, ['peers'])));
    const rs = await openStream(s, bearer(await apiToken(s, ['routes'])));
    const ls = await openStream(s, bearer(await apiToken(s, ['logs'])));
    try {
      for (const st of [ps, rs, ls]) await st.waitFor((m) => m.event === 'ready');
      const g = await s.req('/api/v1/peer-groups', { method: 'POST', json: { name: 'sse-group' }, headers: as() });
      assert.equal(g.status, 201, JSON.stringify(g.data));
      const gid = g.data.group.id;
      assert.equal((await s.req(`/api/v1/peer-groups/${gid}`, { method: 'PUT', json: { name: 'sse-group-2', color: '#123456' }, headers: as() })).status, 200);
      await s.req('/api/v1/peers', { method: 'POST', json: { name: 'sse-tagged', tags: ['sse-tag'], group_id: gid }, headers: as() });
      assert.equal((await s.req(`/api/v1/peer-groups/${gid}`, { method: 'DELETE', headers: as() })).status, 200);
      const t = await s.req('/api/v1/tags', { method: 'POST', json: { name: 'sse-reg' }, headers: as() });
      assert.ok(t.status === 200 || t.status === 201, JSON.stringify(t.data));
      assert.equal((await s.req('/api/v1/tags/sse-tag', { method: 'DELETE', headers: as() })).status, 200);
      await ps.waitFor((m) => m.event === 'tag_deleted');
      const got = ps.messages.filter(isDomain).map((m) => [m.event, m.data]);
      const strip = (d: unknown) => {
        const { at: _at, ...rest } = obj(d);
        return rest;
      };
      assert.deepEqual(
        got.filter(([e]) => e !== 'peer_created' && e !== 'peer_updated').map(([e, d]) => [e, strip(d)]),
        [
          ['peer_group_created', { group_id: gid, name: 'sse-group', actor: 1 }],
          ['peer_group_updated', { group_id: gid, name: 'sse-group-2', fields: ['name', 'color'], actor: 1 }],
          ['peer_group_deleted', { group_id: gid, name: 'sse-group-2', peers_ungrouped: 1, actor: 1 }],
          ['tag_created', { tag_id: t.data.tag.id, name: 'sse-reg', actor: 1 }],
          ['tag_deleted', { name: 'sse-tag', registered: false, peers_updated: 1, actor: 1 }],
        ],
      );
      // the activity rows are the same as before these were events
      const row = await ls.waitFor((m) => m.event === 'activity_recorded' && at(m.data, 'entry', 'event_type') === 'tag_deleted');
      assert.equal(at(row.data, 'entry', 'message'), 'Tag "sse-tag" deleted (removed from 1 peers)');
      const grp = await ls.waitFor((m) => m.event === 'activity_recorded' && at(m.data, 'entry', 'event_type') === 'peer_group_deleted');
      const grpEntry = objAt(grp.data, 'entry');
      assert.deepEqual(
        [grpEntry.message, grpEntry.details, grpEntry.user_id],
        ['Peer group "sse-group-2" deleted (1 peers ungrouped)', { group_id: gid, peers_ungrouped: 1 }, 1],
      );
      // fence for the routes reader: its own event after all of the above
      const rid = await newRoute('sse-fence.example.test', await newPeer('sse-fence'));
      await rs.waitFor((m) => m.event === 'route_created' && m.data.route_id === rid);
      assert.deepEqual(
        rs.messages.filter(isDomain).map((m) => m.event),
        ['route_created'],
      );
    } finally {
      for (const st of [ps, rs, ls]) st.close();
    }
  });

  test('account and token changes reach admins only; route auth changes reach routes readers', async () => {
    const readOnly = await openStream(s, bearer(await apiToken(s, ['read-only'])));
    const peersTok = await openStream(s, bearer(await apiToken(s, ['peers'])));
    const routesTok = await openStream(s, bearer(await apiToken(s, ['routes'])));
    const u = await s.req('/api/v1/users', { method: 'POST', json: { username: 'sse-viewer', password: 'viewer-password-1', role: 'user' }, headers: as() });
    assert.equal(u.status, 201, JSON.stringify(u.data));
    const viewer = await login(s, { username: 'sse-viewer', password: 'viewer-password-1' });
    const userSession = await openStream(s, { cookie: viewer.cookie });
    const adminSession = await openStream(s, { cookie: admin.cookie });
    const all = [readOnly, peersTok, routesTok, userSession, adminSession];
    try {
      for (const st of all) await st.waitFor((m) => m.event === 'ready');
      const t = await s.req('/api/v1/tokens', { method: 'POST', json: { name: 'sse-made', scopes: ['logs'] }, headers: as() });
      assert.equal(t.status, 201);
      assert.equal((await s.req(`/api/v1/tokens/${t.data.record.id}`, { method: 'DELETE', headers: as() })).status, 200);
      assert.equal((await s.req(`/api/v1/users/${u.data.user.id}`, { method: 'PUT', json: { email: 'viewer@example.test' }, headers: as() })).status, 200);
      const rid = await newRoute('sse-auth.example.test', await newPeer('sse-auth'));
      const ra = await s.req(`/api/v1/routes/${rid}/auth`, {
        method: 'POST',
        json: { method: 'email_password', email: 'a@b.test', password: 'secret-pass', session_max_age: 86_400_000 },
        headers: as(),
      });
      assert.ok(ra.status === 200 || ra.status === 201, JSON.stringify(ra.data));
      assert.equal((await s.req(`/api/v1/routes/${rid}/auth`, { method: 'DELETE', headers: as() })).status, 200);
      const adminTypes = ['token_created', 'token_revoked', 'user_updated'];
      for (const st of [readOnly, adminSession]) {
        await st.waitFor((m) => m.event === 'route_auth_deleted');
        // (the read-only stream also saw the tokens this test created for the other streams)
        const got = st.messages.filter((m) => adminTypes.includes(m.event) && (m.event === 'user_updated' || m.data.name === 'sse-made'));
        assert.deepEqual(
          got.map((m) => m.event),
          adminTypes,
        );
        assert.deepEqual([got[0].data.name, got[0].data.scopes, got[0].data.actor], ['sse-made', ['logs'], 1]);
        assert.deepEqual([got[2].data.user_id, got[2].data.username, got[2].data.fields], [u.data.user.id, 'sse-viewer', ['email']]);
      }
      await routesTok.waitFor((m) => m.event === 'route_auth_deleted');
      assert.deepEqual(
        routesTok.messages.filter((m) => m.event.startsWith('route_auth')).map((m) => [m.event, m.data.route_id, m.data.domain]),
        [
          ['route_auth_created', rid, 'sse-auth.example.test'],
          ['route_auth_deleted', rid, 'sse-auth.example.test'],
        ],
      );
      const created = routesTok.messages.find((m) => m.event === 'route_auth_created')!;
      assert.deepEqual([created.data.method, created.data.two_factor_method, created.data.password_changed], ['email_password', null, true]);
      // the non-admin session and the peers token: none of the account/token events
      await userSession.waitFor((m) => m.event === 'route_auth_deleted');
      assert.deepEqual(
        userSession.messages.filter((m) => adminTypes.includes(m.event)),
        [],
      );
      await peersTok.waitFor((m) => m.event === 'peer_created' && m.data.name === 'sse-auth');
      const fence = await newPeer('sse-auth-fence');
      await peersTok.waitFor((m) => m.event === 'peer_created' && m.data.peer_id === fence);
      assert.deepEqual(
        peersTok.messages.filter(isDomain).map((m) => m.event),
        ['peer_created', 'peer_created'],
      );
      // the activity rows written from these events are the ones the log always had
      const rows = (await s.req('/api/v1/logs/activity?source=routes&limit=5', { headers: bearer(full) })).data.entries;
      assert.deepEqual(
        rows.filter((r) => r.event_type.startsWith('route_auth')).map((r) => r.message),
        ['Route auth removed from sse-auth.example.test; its sessions ended', 'Route auth enabled on sse-auth.example.test (email_password)'],
      );
      const tokRows = (await s.req('/api/v1/logs/activity?source=tokens&limit=2', { headers: bearer(full) })).data.entries;
      assert.deepEqual(
        tokRows.map((r) => [r.message, r.details]),
        [
          ['API token sse-made revoked', { id: t.data.record.id }],
          ['API token sse-made created', { id: t.data.record.id, scopes: ['logs'] }],
        ],
      );
    } finally {
      for (const st of all) st.close();
    }
  });

  test('settings and SMTP changes reach admins only, with the activity rows the log always had', async () => {
    const adminSt = await openStream(s, bearer(full));
    const routesSt = await openStream(s, bearer(await apiToken(s, ['routes'])));
    try {
      for (const st of [adminSt, routesSt]) await st.waitFor((m) => m.event === 'ready');
      assert.equal((await s.req('/api/v1/settings/default-theme', { method: 'PUT', json: { theme: 'pro' }, headers: as() })).status, 200);
      assert.equal((await s.req('/api/v1/settings/security', { method: 'PUT', json: { lockout: { max_attempts: 7 } }, headers: as() })).status, 200);
      assert.equal((await s.req('/api/v1/settings/monitoring', { method: 'PUT', json: { interval_seconds: 120 }, headers: as() })).status, 200);
      const smtp = await s.req('/api/v1/smtp', {
        method: 'PUT',
        json: { host: '127.0.0.1', port: 2525, secure: false, from: 'gh@example.test' },
        headers: as(),
      });
      assert.equal(smtp.status, 200, JSON.stringify(smtp.data));
      await adminSt.waitFor((m) => m.event === 'smtp_updated');
      const strip = (d: unknown) => {
        const { at: _at, ...rest } = obj(d);
        return rest;
      };
      const got = adminSt.messages
        .filter((m) => m.event === 'settings_changed' || m.event === 'smtp_updated')
        .map((m): [string, Record<string, unknown>] => [m.event, strip(m.data)]);
      assert.deepEqual(got.slice(0, 2), [
        ['settings_changed', { section: 'default_theme', theme: 'pro', actor: 1 }],
        ['settings_changed', { section: 'security', lockout: { max_attempts: 7 }, actor: 1 }],
      ]);
      assert.equal(got[2][0], 'settings_changed');
      assert.deepEqual([got[2][1].section, got[2][1].interval_seconds], ['monitoring', 120]);
      assert.deepEqual(got[3], ['smtp_updated', { host: '127.0.0.1', port: 2525, secure: false, user: null, password_changed: false, actor: 1 }]);
      const rows = (await s.req('/api/v1/logs/activity?source=settings&limit=4', { headers: bearer(full) })).data.entries;
      assert.deepEqual(rows.map((r) => [r.event_type, r.message]).reverse(), [
        ['settings_changed', 'Default theme set to pro'],
        ['settings_changed', 'Lockout settings changed'],
        ['settings_changed', 'Uptime monitoring interval set to 120 s'],
        ['smtp_updated', 'SMTP settings saved (127.0.0.1:2525)'],
      ]);
      assert.deepEqual(rows[2].details, { max_attempts: 7 });
      const rid = await newRoute('sse-settings-fence.example.test', await newPeer('sse-settings-fence'));
      await routesSt.waitFor((m) => m.event === 'route_created' && m.data.route_id === rid);
      assert.deepEqual(
        routesSt.messages.filter(isDomain).map((m) => m.event),
        ['route_created'],
      );
    } finally {
      adminSt.close();
      routesSt.close();
    }
  });

  test('a logs token receives activity rows only', async () => {
    const logsTok = await apiToken(s, ['logs']);
    const st = await openStream(s, bearer(logsTok));
    try {
      await st.waitFor((m) => m.event === 'ready');
      const id = await newPeer('sse-logs');
      await st.waitFor((m) => m.event === 'activity_recorded' && at(m.data, 'entry', 'details', 'peer_id') === id);
      assert.ok(
        st.messages.filter(isDomain).every((m) => m.event === 'activity_recorded'),
        st.raw(),
      );
    } finally {
      st.close();
    }
  });

  test('refusals: no credentials 401, a gateway token 401, a token without a live-event scope 403, Accept without event-stream 406', async () => {
    const none = await refused(s, {});
    assert.equal(none.status, 401);
    assert.equal(none.data.ok, false);
    const gw = await s.req('/api/v1/peers', { method: 'POST', json: { name: 'sse-gw', is_gateway: true }, headers: as() });
    assert.equal(gw.status, 201, JSON.stringify(gw.data));
    assert.equal((await refused(s, bearer(gw.data.gateway!.apiToken))).status, 401);
    for (const scopes of [['settings'], ['client'], ['webhooks', 'settings']]) {
      const r = await refused(s, bearer(await apiToken(s, scopes)));
      assert.equal(r.status, 403, `${scopes}: ${JSON.stringify(r.data)}`);
      assert.match(r.data.error!, /scope/);
    }
    const json = await s.req<Refusal>('/api/v1/events', { headers: { ...bearer(full), accept: 'application/json' } });
    assert.equal(json.status, 406);
    assert.equal(json.data.ok, false);
    assert.equal(s.deps.eventStreams.size, 0, 'no stream left open by the refusals');
  });

  test('disconnect, two changes, reconnect with Last-Event-ID: both replayed in order, none twice', async () => {
    const first = await openStream(s, { cookie: admin.cookie });
    const ready = await first.waitFor((m) => m.event === 'ready');
    first.close();
    await first.ended;
    const a = await newPeer('sse-missed-a');
    const b = await newPeer('sse-missed-b');
    const again = await openStream(s, { cookie: admin.cookie, 'last-event-id': ready.id! });
    try {
      const r = await again.waitFor((m) => m.event === 'ready');
      assert.equal(r.data.resumed, true);
      const c = await newPeer('sse-after');
      await again.waitFor((m) => m.event === 'peer_created' && m.data.peer_id === c);
      const created = again.messages.filter((m) => m.event === 'peer_created').map((m) => m.data.peer_id);
      assert.deepEqual(created, [a, b, c]);
      const ids = again.messages.filter(isDomain).map((m) => m.id);
      assert.equal(new Set(ids).size, ids.length, 'no event twice');
      // the replayed ones came before `ready`, the new one after it
      const at = (pred: (m: Msg) => boolean) => again.messages.findIndex(pred);
      assert.ok(at((m) => m.data.peer_id === b) < at((m) => m.event === 'ready'));
      assert.ok(at((m) => m.data.peer_id === c) > at((m) => m.event === 'ready'));
    } finally {
      again.close();
    }
    // the query parameter does the same for EventSource polyfills
    const viaQuery = await openStream(s, { cookie: admin.cookie }, `?last_event_id=${encodeURIComponent(ready.id!)}`);
    try {
      await viaQuery.waitFor((m) => m.event === 'ready');
      assert.deepEqual(
        viaQuery.messages.filter((m) => m.event === 'peer_created').map((m) => m.data.name),
        ['sse-missed-a', 'sse-missed-b', 'sse-after'],
      );
    } finally {
      viaQuery.close();
    }
  });

  test('an unknown or foreign Last-Event-ID gets `reset` (reload), then the stream goes on from now', async () => {
    for (const [id, reason] of [
      ['otherboot-5', 'other_run'],
      ['garbage', 'other_run'],
      [`${s.deps.events.boot}-999999999`, 'too_old'],
    ]) {
      const st = await openStream(s, { cookie: admin.cookie, 'last-event-id': id });
      try {
        const reset = await st.waitFor((m) => m.event === 'reset');
        assert.equal(reset.data.reason, reason, id);
        assert.equal(reset.id, s.deps.events.cursor);
        const ready = await st.waitFor((m) => m.event === 'ready');
        assert.equal(ready.data.resumed, false);
        assert.equal(st.messages.filter(isDomain).length, 0, 'nothing replayed');
      } finally {
        st.close();
      }
    }
  });

  test('the OpenAPI document declares the stream with its event names', async () => {
    const doc = (await s.req('/api/v1/openapi.json', { headers: bearer(full) })).data;
    const op = objAt(doc, 'paths', '/api/v1/events', 'get');
    const content = at(op, 'responses', '200', 'content', 'text/event-stream');
    assert.ok(content, 'text/event-stream response');
    const names = objsAt(content, 'x-events').map((e) => e.name);
    for (const n of ['peer_created', 'peer_online', 'route_down', 'circuit_open', 'gateway_offline', 'activity_recorded', 'config_changed'])
      assert.ok(names.includes(n), n);
    assert.ok(!names.includes('rows_changed'));
    assert.match(str(at(op, 'responses', '200', 'description')), /Last-Event-ID/);
    assert.ok(at(op, 'responses', '406'));
    assert.ok(objsAt(op, 'parameters').some((p) => p.name === 'last_event_id'));
  });
});

describe('heartbeat, revocation and server stop', () => {
  test('a comment every 15 s on the scheduler clock; a revoked token ends the stream at the next one', async () => {
    const clock = manualClock(Date.now());
    const s = await startTestServer({}, { timers: clock.timers });
    try {
      const tok = await apiToken(s, ['peers']);
      const st = await openStream(s, bearer(tok));
      await st.waitFor((m) => m.event === 'ready');
      assert.equal(st.comments.length, 0);
      clock.advance(14_999);
      clock.advance(1);
      await st.waitComments(1);
      assert.match(st.comments[0], /^heartbeat/);
      clock.advance(15_000);
      await st.waitComments(2);
      const list = (await s.req('/api/v1/tokens', { headers: bearer(await apiToken(s)) })).data.tokens;
      const mine = list.find((t) => t.name.startsWith('t-peers-'))!;
      const { cookie, csrf } = await login(s);
      assert.equal((await s.req(`/api/v1/tokens/${mine.id}`, { method: 'DELETE', headers: { cookie, 'x-csrf-token': csrf } })).status, 200);
      clock.advance(15_000);
      await st.ended;
      assert.equal(st.comments.length, 2, 'no heartbeat for a revoked token');
      assert.equal(s.deps.eventStreams.size, 0);
    } finally {
      await s.close();
    }
  });

  test('a session stream ends at the heartbeat after its session signed out', async () => {
    const clock = manualClock(Date.now());
    const s = await startTestServer({}, { timers: clock.timers });
    try {
      const { cookie, csrf } = await login(s);
      const st = await openStream(s, { cookie });
      await st.waitFor((m) => m.event === 'ready');
      clock.advance(15_000);
      await st.waitComments(1);
      assert.equal((await s.req('/logout', { method: 'POST', headers: { cookie, 'x-csrf-token': csrf, accept: 'application/json' } })).status, 200);
      clock.advance(15_000);
      await st.ended;
      assert.equal(st.comments.length, 1);
    } finally {
      await s.close();
    }
  });

  test('server stop ends open streams and does not hang', async () => {
    const s = await startTestServer();
    const { cookie } = await login(s);
    const streams = [await openStream(s, { cookie }), await openStream(s, bearer(await apiToken(s, ['routes'])))];
    for (const st of streams) await st.waitFor((m) => m.event === 'ready');
    assert.equal(s.deps.eventStreams.size, 2);
    const t0 = Date.now();
    await s.close();
    const ms = Date.now() - t0;
    await Promise.all(streams.map((st) => st.ended));
    assert.ok(ms < 3000, `close took ${ms} ms`);
  });
});
