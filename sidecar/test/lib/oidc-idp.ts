// A real OpenID Provider for the tests: npm oidc-provider (a certified implementation), run as its
// own process on loopback (startIdp spawns this file; run directly, it reads its setup from
// GH_IDP_SETUP and prints "ready <port>"). Its users and their claims come from the setup; its
// development interactions are the login form (any password; the login names the user), and
// every client's grant covers the scopes asked for (no consent page). Nothing of the protocol is
// mocked: discovery, keys, the code flow with PKCE, tokens and user info are the library's.
import { spawn } from 'node:child_process';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface IdpUser {
  email?: string;
  email_verified?: boolean;
  groups?: string[];
  name?: string;
}

export interface IdpSetup {
  clients: { client_id: string; client_secret?: string; redirect_uris: string[] }[];
  users: Record<string, IdpUser>;
}

export interface Idp {
  issuer: string;
  port: number;
  close(): Promise<void>;
}

/** Starts the provider in a child process on 127.0.0.1 (a free port), and resolves once it listens. */
export async function startIdp(setup: IdpSetup): Promise<Idp> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url)], {
    env: { ...process.env, GH_IDP_SETUP: JSON.stringify(setup) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout! });
    lines.on('line', (l) => {
      const m = /^ready (\d+)$/.exec(l);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`the test IdP exited (${code})`)));
  });
  return {
    issuer: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

async function main(): Promise<void> {
  const setup = JSON.parse(process.env.GH_IDP_SETUP ?? '{}') as IdpSetup;
  const http = await import('node:http');
  const { default: Provider } = await import('oidc-provider');
  // the port first, so that the issuer names it
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const provider = new Provider(`http://127.0.0.1:${port}`, {
    clients: setup.clients.map((c) => ({
      ...c,
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: c.client_secret ? 'client_secret_post' : 'none',
    })),
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['preferred_username', 'name'], groups: ['groups'] },
    scopes: ['openid', 'email', 'profile', 'groups'],
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    cookies: { keys: ['gatehouse-test-idp-cookie-key'] },
    async findAccount(_ctx, sub) {
      const u = setup.users[sub];
      if (!u) return undefined;
      return {
        accountId: sub,
        claims: async () => ({
          sub,
          preferred_username: sub,
          name: u.name ?? sub,
          email: u.email,
          email_verified: u.email_verified ?? false,
          groups: u.groups ?? [],
        }),
      };
    },
    // no consent page: every client is granted the scopes it asks for
    async loadExistingGrant(ctx) {
      const clientId = ctx.oidc.client!.clientId;
      const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session!.grantIdFor(clientId);
      if (grantId) {
        const existing = await ctx.oidc.provider.Grant.find(grantId);
        if (existing) return existing;
      }
      const grant = new ctx.oidc.provider.Grant({ clientId, accountId: ctx.oidc.session!.accountId });
      grant.addOIDCScope(String(ctx.oidc.params!.scope ?? 'openid'));
      await grant.save();
      return grant;
    },
  });
  server.on('request', provider.callback());
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
  console.log(`ready ${port}`);
}

if (process.env.GH_IDP_SETUP && process.argv[1] === fileURLToPath(import.meta.url)) await main();

/** A browser's cookies at the provider (name → value), enough for its login and the redirect back. */
export class ProviderJar {
  private cookies = new Map<string, string>();
  take(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1).trim();
      const gone = attrs.some((a) => /^\s*max-age=0$/i.test(a) || /^\s*expires=Thu, 01 Jan 1970/i.test(a));
      if (gone || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/**
 * A browser at the provider, from its authorization URL on: its login form (the development
 * interaction, posted with `login` as the user) and the redirects; returns the URL the provider
 * sends the browser back to (not visited).
 */
export async function throughIdp(idp: Idp, jar: ProviderJar, authorizationUrl: string, user: string): Promise<URL> {
  let url = new URL(authorizationUrl);
  for (let hop = 0; hop < 10; hop++) {
    if (url.origin !== idp.issuer) return url;
    const go = async (u: string, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      if (jar.header()) headers.set('cookie', jar.header());
      const res = await fetch(u, { ...init, headers, redirect: 'manual' });
      jar.take(res);
      return Object.assign(res, { text: await res.text() });
    };
    let res = await go(url.href);
    if (res.status === 200 && res.text.includes('name="login"')) {
      const action = /action="([^"]+)"/.exec(res.text)![1];
      res = await go(new URL(action, url).href, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ prompt: 'login', login: user, password: 'any' }).toString(),
      });
    }
    if (![302, 303].includes(res.status)) throw new Error(`provider step ${url.pathname}: ${res.status} ${res.text.slice(0, 300)}`);
    url = new URL(res.headers.get('location')!, url);
  }
  throw new Error('the provider never sent the browser back');
}
