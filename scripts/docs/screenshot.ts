// The screenshot of the documentation (docs/images/admin-peers.png): the admin app's peers screen in
// Debian's Chromium (playwright-core), on a throwaway sidecar with demo data. Peers, groups, tags and
// routes are made through the API; what only a live tunnel would produce (handshakes, endpoints,
// byte counters) is written into the peers table and the traffic history as the WireGuard poller
// writes it. Build the admin app first: npm run -s -w @gatehouse/ui build.
//   node --import tsx scripts/docs/screenshot.ts [--screen peers|dashboard|routes] [--out file.png]
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiToken, bearer, startTestServer } from '../../sidecar/test/lib/server.js';
import { addSamples } from '../../sidecar/src/peers/traffic.js';
import { adminPage, openBrowser, settled } from '../../test/lib/browser.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const screen = arg('screen', 'peers');
const out = path.resolve(arg('out', path.join(root, 'docs', 'images', `admin-${screen}.png`)));

const MIB = 1024 * 1024;
const GROUPS = [
  { name: 'Office', color: '#2563eb', description: 'Desks and the meeting room' },
  { name: 'Servers', color: '#16a34a', description: 'Machines that publish services' },
  { name: 'Family', color: '#d97706', description: null },
];
// name, group, tags, online (seconds since the handshake; null: never connected), total traffic in MiB
const PEERS: [string, string, string[], number | null, number, number][] = [
  ['nas-basement', 'Servers', ['storage', 'backup'], 12, 48_213, 9_870],
  ['build-runner', 'Servers', ['ci'], 41, 12_406, 31_877],
  ['home-assistant', 'Servers', ['iot'], 95, 2_310, 760],
  ['anna-laptop', 'Office', ['staff'], 23, 5_120, 1_024],
  ['ben-laptop', 'Office', ['staff'], 7_200, 3_400, 870],
  ['meeting-room-pc', 'Office', ['rdp'], 130, 640, 210],
  ['reception-phone', 'Office', ['mobile'], null, 0, 0],
  ['mum-tablet', 'Family', ['mobile'], 64, 930, 120],
  ['kids-desktop', 'Family', ['rdp'], 86_400 * 3, 1_900, 350],
];

const s = await startTestServer();
try {
  const h = bearer(await apiToken(s));
  const api = async <P extends string, M extends string = 'GET'>(p: P, method?: M, json?: unknown) => {
    const r = await s.req<never, `/api/v1${P}`, M>(`/api/v1${p}`, { method, headers: h, ...(json !== undefined ? { json } : {}) });
    if (!r.ok) throw new Error(`${method ?? 'GET'} ${p}: ${r.status} ${JSON.stringify(r.data)}`);
    return r.data;
  };
  const groupIds = new Map<string, number>();
  for (const g of GROUPS) groupIds.set(g.name, (await api('/peer-groups', 'POST', g)).group.id);
  const now = Date.now();
  const peers: { id: number; name: string }[] = [];
  for (const [name, group, tags, ageS, rxMiB, txMiB] of PEERS) {
    const peer = (await api('/peers', 'POST', { name, group_id: groupIds.get(group), tags })).peer;
    peers.push(peer);
    // what the poller stores after reading `wg show dump`
    await s.deps.db.models.Peer.update(
      {
        latest_handshake: ageS === null ? null : now - ageS * 1000,
        endpoint: ageS === null ? null : `198.51.100.${10 + peers.length}:${51000 + peers.length}`,
        total_rx: rxMiB * MIB,
        total_tx: txMiB * MIB,
      } as never,
      { where: { id: peer.id } },
    );
    if (ageS !== null && ageS < 3600) {
      for (let m = 5; m <= 24 * 60; m += 5) {
        const wave = 1 + Math.sin((m / 60 / 24) * 2 * Math.PI + peers.length);
        await addSamples(
          s.deps.db.sequelize,
          [{ peerId: peer.id, rx: Math.round(((rxMiB * MIB) / 20_000) * wave), tx: Math.round(((txMiB * MIB) / 20_000) * wave) }],
          now - m * 60_000,
        );
      }
    }
  }
  const byName = new Map(peers.map((p) => [p.name, p.id]));
  await api('/routes', 'POST', { domain: 'files.example.com', peer_id: byName.get('nas-basement'), target_port: 5000 });
  await api('/routes', 'POST', { domain: 'ci.example.com', peer_id: byName.get('build-runner'), target_port: 8080 });
  await api('/routes', 'POST', { domain: 'home.example.com', peer_id: byName.get('home-assistant'), target_port: 8123 });

  const browser = await openBrowser();
  try {
    const { page } = await adminPage(browser, s.url, { width: 1280, height: 720 });
    await page.goto(`${s.url}/${screen === 'dashboard' ? '' : screen}`);
    await settled(page);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))); // charts draw after the data arrived
    await page.screenshot({ path: out });
    process.stdout.write(`wrote ${path.relative(root, out)}\n`);
  } finally {
    await browser.close();
  }
} finally {
  await s.close();
}
