// The gateway API on the server's tunnel address.
//
// Companions reach the server through their WireGuard tunnel: gateway.env's GATEHOUSE_SERVER_URL is
// http://<server tunnel address>:<GATEHOUSE_PORT>. The sidecar's main listener binds GATEHOUSE_BIND
// (127.0.0.1 by default), so this second listener binds the tunnel address itself and serves ONLY the
// companion API (/api/v1/gateway/*, same endpoint declarations, same gateway-token auth); everything
// else is 404 there, so the admin API is not exposed to the VPN. Plain HTTP is fine inside the tunnel
// (WireGuard encrypts and authenticates every packet), and a gateway token is only accepted from its
// own peer's tunnel address (http/auth.ts checkGatewaySource: here always, on the main listener unless
// GATEHOUSE_GATEWAY_TOKEN_ANY_SOURCE=true). No DNS, certificate or public exposure is involved.
//
// When GATEHOUSE_BIND is a wildcard address the main listener already covers the tunnel address and
// this one is not started. The tunnel address appears when the WireGuard interface comes up: until
// then (or after it was removed) binding is retried every RETRY_MS.
import http from 'node:http';
import type { Deps } from '../deps.js';
import type { WireGuardService } from '../wireguard/service.js';

export const RETRY_MS = 5000;

export class TunnelListener {
  private server: http.Server | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  address: string | null = null;
  listening = false;
  private failures = 0;

  constructor(
    private readonly deps: Deps,
    private readonly wg: WireGuardService,
  ) {}

  /** Why the listener is not started, or null when it should be. */
  skipReason(): string | null {
    const c = this.deps.config;
    if (!c.gateways.tunnelListen) return 'GATEHOUSE_GATEWAY_TUNNEL_LISTEN=false';
    if (['', '0.0.0.0', '::'].includes(c.bind)) return `GATEHOUSE_BIND=${c.bind || '(empty)'} already listens on every address`;
    return null;
  }

  /** app: the companion API alone (gateways/endpoints.ts gatewayTunnelApp), built only when the listener starts. */
  start(app: () => http.RequestListener): void {
    const why = this.skipReason();
    if (why) {
      this.deps.log.info(`gateway API tunnel listener not started: ${why}`);
      return;
    }
    this.stopped = false;
    this.address = this.wg.serverAddress;
    const server = http.createServer(app());
    server.keepAliveTimeout = 65_000;
    this.server = server;
    const attempt = () => {
      if (this.stopped) return;
      const onError = (err: NodeJS.ErrnoException) => {
        server.off('listening', onListening);
        if (this.stopped) return;
        const msg = `gateway API tunnel listener: cannot listen on ${this.address}:${this.deps.config.port} yet (${err.code ?? err.message}); retrying every ${RETRY_MS / 1000} s`;
        if (this.failures++ === 0) this.deps.log.warn(msg);
        else this.deps.log.debug(msg);
        this.timer = setTimeout(attempt, RETRY_MS);
        this.timer.unref();
      };
      const onListening = () => {
        server.off('error', onError);
        this.listening = true;
        this.failures = 0;
        this.deps.log.info(`gateway API listening on the tunnel address http://${this.address}:${this.deps.config.port}`);
      };
      server.once('error', onError);
      server.once('listening', onListening);
      server.listen(this.deps.config.port, this.address!);
    };
    attempt();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const s = this.server;
    this.server = null;
    if (s && this.listening) {
      await new Promise<void>((resolve) => {
        s.close(() => resolve());
        s.closeIdleConnections();
        setTimeout(() => s.closeAllConnections(), 5000).unref();
      });
    }
    this.listening = false;
  }
}
