// Helpers for the route-auth and SMTP tests: a real SMTP server on loopback that keeps what it
// receives, routes inserted straight into the table, and a browser-like client with a cookie jar
// that talks to the sidecar the way Caddy forwards requests (Host of the protected domain,
// X-Forwarded-* headers, X-Route-Domain).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { TestServer } from './lib/server.js';
import { waitFor } from '../../test/lib/wait.js';

export interface Mail {
  from: string;
  to: string[];
  raw: string;
  user?: string;
  password?: string;
}

export interface SmtpSink {
  port: number;
  mails: Mail[];
  /** waits until `n` mails arrived in total */
  waitFor(n: number, ms?: number): Promise<Mail>;
  close(): Promise<void>;
}

/** A real SMTP server (smtp-server) on 127.0.0.1; AUTH PLAIN/LOGIN over plain TCP, no STARTTLS. */
export async function startSmtp(auth?: { user: string; password: string }): Promise<SmtpSink> {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    authOptional: !auth,
    allowInsecureAuth: true,
    logger: false,
    onAuth(a, _session, cb) {
      if (auth && a.username === auth.user && a.password === auth.password) return cb(null, { user: a.username });
      return cb(new Error('Invalid username or password'));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
          user: session.user as string | undefined,
        });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    mails,
    waitFor: (n: number, ms = 5000) =>
      waitFor(
        () => {
          if (mails.length < n) throw new Error(`expected ${n} mails, got ${mails.length}`);
          return mails[n - 1];
        },
        ms,
        `mail number ${n}`,
      ),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The 6-digit code of a login-code mail (the indented line of the text part). */
export function codeFromMail(m: Mail): string {
  const match = /^ {4}(\d{6})\s*$/m.exec(m.raw);
  if (!match) throw new Error(`no code in mail:\n${m.raw}`);
  return match[1];
}

let routeCounter = 0;
/** Inserts a route row directly (the routes API is tested elsewhere). */
export async function createRoute(s: TestServer, fields: Record<string, unknown> = {}): Promise<{ id: number; domain: string }> {
  const now = s.deps.clock();
  const domain = (fields.domain as string) ?? `app${++routeCounter}-${process.pid}.test`;
  const row = await s.deps.db.models.Route.create({
    domain,
    route_type: 'http',
    target_kind: 'peer',
    enabled: true,
    https_enabled: true,
    created_at: now,
    updated_at: now,
    ...fields,
  });
  return { id: Number(row.get('id')), domain };
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One HTTP request with full control of the headers (Host included). */
export function rawRequest(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method, path, headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

interface Cookie {
  value: string;
  path: string;
  attrs: string;
}

/**
 * A browser on a protected domain, talking to the sidecar as Caddy would forward it: the login
 * pages with Host = domain and X-Route-Domain, verify as Caddy's forward_auth subrequest.
 */
export class Browser {
  cookies = new Map<string, Cookie>();
  constructor(
    private s: TestServer,
    public domain: string,
    public opts: { proto?: 'http' | 'https'; ip?: string; lang?: string; routeDomain?: string } = {},
  ) {}

  private cookieHeader(path: string): string {
    return [...this.cookies]
      .filter(([, c]) => path.startsWith(c.path))
      .map(([k, c]) => `${k}=${c.value}`)
      .join('; ');
  }

  store(res: RawResponse): void {
    const set = res.headers['set-cookie'] ?? [];
    for (const line of set) {
      const [pair, ...attrs] = line.split(';').map((x) => x.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const pathAttr = attrs.find((a) => a.toLowerCase().startsWith('path='));
      const expired = attrs.some((a) => /^max-age=0$/i.test(a) || (/^expires=/i.test(a) && Date.parse(a.slice(8)) < Date.now()));
      if (!value || expired) this.cookies.delete(name);
      else this.cookies.set(name, { value, path: pathAttr ? pathAttr.slice(5) : '/', attrs: attrs.join('; ') });
    }
  }

  headers(path: string, extra: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = {
      host: this.domain,
      'x-forwarded-proto': this.opts.proto ?? 'https',
      'x-forwarded-host': this.domain,
      'x-forwarded-for': this.opts.ip ?? '203.0.113.50',
      'x-route-domain': this.opts.routeDomain ?? this.domain,
      'accept-language': this.opts.lang ?? 'en',
      'user-agent': 'route-auth-test',
    };
    const cookie = this.cookieHeader(path);
    if (cookie) h.cookie = cookie;
    return { ...h, ...extra };
  }

  async get(path: string, extra: Record<string, string> = {}): Promise<RawResponse> {
    const res = await rawRequest(this.s.port, 'GET', path, this.headers(path.split('?')[0], extra));
    this.store(res);
    return res;
  }

  async post(path: string, form: Record<string, string>, extra: Record<string, string> = {}): Promise<RawResponse> {
    const body = new URLSearchParams(form).toString();
    const res = await rawRequest(
      this.s.port,
      'POST',
      path,
      { ...this.headers(path.split('?')[0], extra), 'content-type': 'application/x-www-form-urlencoded' },
      body,
    );
    this.store(res);
    return res;
  }

  /** Caddy's forward-auth subrequest for an original request `uri`. */
  async verify(uri = '/', extra: Record<string, string> = {}): Promise<RawResponse> {
    const base = this.headers(uri.split('?')[0], extra);
    return rawRequest(this.s.port, 'GET', '/route-auth/verify', { ...base, 'x-forwarded-method': 'GET', 'x-forwarded-uri': uri, ...extra });
  }

  /** The CSRF token of the last login page (hidden field). */
  static csrf(html: string): string {
    const m = /name="_csrf" value="([^"]+)"/.exec(html);
    if (!m) throw new Error(`no CSRF field in page:\n${html}`);
    return m[1];
  }

  /** Opens the login page and posts one step of the form on it. */
  async submit(step: string, fields: Record<string, string>, rd = `https://${this.domain}/`): Promise<RawResponse> {
    const page = await this.get(`/route-auth/login?rd=${encodeURIComponent(rd)}`);
    if (page.status !== 200) throw new Error(`login page: ${page.status} ${page.body}`);
    return this.post('/route-auth/login', { _csrf: Browser.csrf(page.body), rd, step, ...fields });
  }

  session(routeId: number): string | undefined {
    return this.cookies.get(`gh_ra_${routeId}`)?.value;
  }
}
