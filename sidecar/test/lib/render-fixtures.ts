// Proxy settings shared by the Caddy renderer's golden-file tests (the values the golden files were made with).
import type { ProxySettings } from '../../src/proxy/render-context.js';

export const goldenSettings: ProxySettings = {
  httpPort: 80,
  httpsPort: 443,
  adminListen: '127.0.0.1:2019',
  tls: 'internal',
  sidecarUpstream: '127.0.0.1:3000',
  bind: '',
  dataDir: '/var/lib/gatehouse',
};
