// Proxy settings and peers shared by the Caddy renderer's golden-file tests (the values the golden files were made with).
import type { PeerTarget, ProxySettings } from '../../src/proxy/render-context.js';

export const goldenSettings: ProxySettings = {
  httpPort: 80,
  httpsPort: 443,
  adminListen: '127.0.0.1:2019',
  tls: 'internal',
  sidecarUpstream: '127.0.0.1:3000',
  bind: '',
  dataDir: '/var/lib/gatehouse',
  lbCookieKey: 'golden-lb-cookie-key',
};

/** Peers 1–3 (the third disabled) that the golden routes point at, plus the file's own extra peers. */
export function goldenPeers(extra: [number, PeerTarget][] = []): Map<number, PeerTarget> {
  return new Map<number, PeerTarget>([
    [1, { address: '10.8.0.2/32', enabled: true }],
    [2, { address: '10.8.0.3', enabled: true }],
    [3, { address: '10.8.0.4', enabled: false }],
    ...extra,
  ]);
}
