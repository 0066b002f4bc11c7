// The renderer's extension point for route kinds with their own rows (RDP's linked routes): a
// RouteKind's rows are read by readSnapshot inside the snapshot's transaction, and what it renders
// is merged by renderCaddyConfig without either function knowing the kind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { QueryTypes } from 'sequelize';
import { openDatabase } from '../src/db/index.js';
import { featureModels } from '../src/features.js';
import { renderCaddyConfig } from '../src/proxy/render.js';
import { contributionOf, type ProxySnapshot, type RouteKind } from '../src/proxy/render-context.js';
import { readSnapshot } from '../src/proxy/snapshot.js';
import { hostEntry } from '../src/proxy/fragments/servers.js';
import { blankRoute } from '../src/routes/model.js';
import { goldenSettings } from './lib/render-fixtures.js';

const settings = goldenSettings;

/** A kind whose rows are (host, tunnel address, port) links; each renders an HTTPS host and a layer4 server. */
interface Link {
  host: string;
  address: string;
  port: number;
}
const linkKind: RouteKind<Link[]> = {
  name: 'test-links',
  async read({ db, transaction }) {
    return (await db.sequelize.query('SELECT host, address, port FROM test_links ORDER BY host', { type: QueryTypes.SELECT, transaction })) as Link[];
  },
  render(rows, ctx) {
    return {
      httpsHosts: Object.fromEntries(rows.map((r) => [r.host, hostEntry([{ handler: 'reverse_proxy', upstreams: [{ dial: `${r.address}:${r.port}` }] }])])),
      httpHosts: Object.fromEntries(rows.map((r) => [r.host, hostEntry([{ handler: 'static_response', status_code: 308 }])])),
      l4Servers: Object.fromEntries(
        rows.map((r) => [
          `link_${r.host}`,
          {
            listen: [`${ctx.settings.bind}:${r.port + 10000}`],
            routes: [{ handle: [{ handler: 'proxy', upstreams: [{ dial: [`${r.address}:${r.port}`] }] }] }],
          },
        ]),
      ),
      certSubjects: rows.map((r) => r.host),
    };
  },
};

test("a route kind's fragment is merged: its hosts on both servers (shared upstream applied), its layer4 server, its certificate", () => {
  const route = { ...blankRoute(0), id: 1, domain: 'app.example.com', peer_id: 1, target_port: '8080' };
  const snap: ProxySnapshot = {
    settings,
    routes: [route],
    peers: new Map([[1, { address: '10.8.0.2/32', enabled: true }]]),
    contributions: [contributionOf(linkKind, [{ host: 'rdp.example.com', address: '10.8.0.7', port: 3389 }])],
  };
  const cfg = renderCaddyConfig(snap) as any;
  const plain = cfg.apps.http.servers.gatehouse_http.routes[0].handle[0].hosts;
  const tls = cfg.apps.http.servers.gatehouse_https.routes[0].handle[0].hosts;
  assert.deepEqual(Object.keys(plain), ['app.example.com', 'rdp.example.com']);
  assert.deepEqual(Object.keys(tls), ['rdp.example.com']);
  assert.deepEqual(tls['rdp.example.com'].routes[0].handle, [
    { handler: 'vars', gatehouse_upstream: '10.8.0.7:3389' },
    { handler: 'invoke', name: 'gatehouse_proxy' },
  ]);
  assert.deepEqual(cfg.apps.layer4.servers['link_rdp.example.com'].listen, [':13389']);
  assert.deepEqual(cfg.apps.tls.certificates.automate, ['rdp.example.com']);
});

test('a route kind that renders a host already served is refused, not silently overwritten', () => {
  const route = { ...blankRoute(0), id: 1, domain: 'rdp.example.com', peer_id: 1, target_port: '8080' };
  const snap: ProxySnapshot = {
    settings,
    routes: [route],
    peers: new Map([[1, { address: '10.8.0.2/32', enabled: true }]]),
    contributions: [contributionOf(linkKind, [{ host: 'rdp.example.com', address: '10.8.0.7', port: 3389 }])],
  };
  assert.throws(() => renderCaddyConfig(snap), /route kind test-links: HTTP host rdp\.example\.com is already rendered/);
});

test("readSnapshot reads each route kind inside the snapshot's transaction and the renderer uses what it read", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-route-kinds-'));
  const db = await openDatabase({ dataDir: dir, models: featureModels });
  try {
    await db.sequelize.query('CREATE TABLE test_links (host TEXT PRIMARY KEY, address TEXT NOT NULL, port INTEGER NOT NULL)');
    await db.sequelize.transaction(async (transaction) => {
      await db.sequelize.query("INSERT INTO test_links VALUES ('desk.example.com', '10.8.0.9', 3389)", { transaction });
      // Not committed yet: the kind must read inside this transaction to see the row.
      const snap = await readSnapshot(db, settings, Date.now(), transaction, undefined, [linkKind]);
      assert.deepEqual(
        snap.contributions?.map((c) => c.kind),
        ['test-links'],
      );
      const cfg = renderCaddyConfig(snap) as any;
      assert.deepEqual(Object.keys(cfg.apps.http.servers.gatehouse_https.routes[0].handle[0].hosts), ['desk.example.com']);
      assert.deepEqual(cfg.apps.layer4.servers['link_desk.example.com'].listen, [':13389']);
    });
    const without = await readSnapshot(db, settings, Date.now());
    assert.deepEqual(without.contributions, []);
  } finally {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
