// The admin single-page app. `npm run build` writes dist/ (index.html + hashed assets), which the
// sidecar serves at / (sidecar/src/web/spa.ts). `npm run dev` proxies the API to a sidecar on :3000.
import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';
import { fileURLToPath } from 'node:url';

const sidecar = process.env.GATEHOUSE_DEV_API ?? 'http://127.0.0.1:3000';

export default defineConfig({
  plugins: [preact()],
  // The server's schemas (sidecar/src/*/schema.ts): the UI's API types are inferred from them
  // (src/protocol.ts); each schema.ts builds for a browser (sidecar/test/schema-browser.test.ts).
  resolve: { alias: { '@server': fileURLToPath(new URL('../src', import.meta.url)) } },
  base: '/',
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // No inline script anywhere: the CSP says script-src 'self'.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
  server: {
    proxy: Object.fromEntries(['/api', '/login', '/logout', '/password', '/api-docs'].map((p) => [p, sidecar])),
  },
});
