// The one harness of the browser tests (test/ui, the e2e and security tests that use a browser, the
// API reference page's test): Debian's chromium (never a downloaded browser) driven by
// playwright-core. Every page records what went wrong (console errors, uncaught exceptions, failed
// requests, HTTP errors the test did not expect, CSP violations) so a test can assert there was none.
//   const ui = uiServer({ GATEHOUSE_RATE_LIMIT_LOGIN: '1000' });    // sidecar + chromium + API session, per file
//   const { page, problems } = await adminPage(ui.browser, ui.s.url, { lang: 'de', width: 360 });
//   await ui.api('/peers', 'POST', { name: 'seeded' });
// Without a sidecar of its own (e2e): openBrowser(), watchedPage(), signIn().
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { after, before } from 'node:test';
import { ADMIN, apiToken, bearer, login, startTestServer, type ApiCall, type ApiInit, type ReqInit, type TestServer } from '../../sidecar/test/lib/server.js';
import type { StartOptions } from '../../sidecar/src/server.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Where the test run saves its screenshots (named in the README). */
export const SCREENSHOT_DIR = join(root, 'test-results', 'ui-screenshots');

export async function openBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'] });
}

export interface WatchedPage {
  page: Page;
  context: BrowserContext;
  /** What went wrong on the page so far; `expect(status, urlPart)` marks an HTTP error as intended. */
  problems: string[];
  allowHttpError(urlPart: string, status: number): void;
}

export interface PageOptions {
  lang?: 'en' | 'de';
  width?: number;
  height?: number;
  colorScheme?: 'light' | 'dark';
  /** console warnings are problems too (not only errors) */
  warnings?: boolean;
  /** signed in without the form: the session cookie header (login()'s `cookie`) set for `url` */
  session?: { url: string; cookie: string };
}

export async function watchedPage(browser: Browser, opts: PageOptions = {}): Promise<WatchedPage> {
  const context = await browser.newContext({
    viewport: { width: opts.width ?? 1280, height: opts.height ?? 860 },
    locale: opts.lang === 'de' ? 'de-DE' : 'en-GB',
    colorScheme: opts.colorScheme ?? 'light',
    extraHTTPHeaders: { 'Accept-Language': opts.lang === 'de' ? 'de-DE,de;q=0.9' : 'en-GB,en;q=0.9' },
  });
  if (opts.session) {
    const { hostname } = new URL(opts.session.url);
    await context.addCookies(
      opts.session.cookie.split('; ').map((c) => {
        const i = c.indexOf('=');
        return { name: c.slice(0, i), value: c.slice(i + 1), domain: hostname, path: '/' };
      }),
    );
  }
  const page = await context.newPage();
  const problems: string[] = [];
  const allowed: { part: string; status: number }[] = [];
  page.on('console', (m) => {
    if (m.type() === 'warning' && opts.warnings) return void problems.push(`console warning: ${m.text()}`);
    if (m.type() !== 'error') return;
    // Chromium reports every HTTP error response as a console error too: an allowed one is not a problem.
    const st = /Failed to load resource: the server responded with a status of (\d+)/.exec(m.text());
    if (st && allowed.some((a) => m.location().url.includes(a.part) && a.status === Number(st[1]))) return;
    problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`exception: ${e.message}`));
  page.on('requestfailed', (r) => {
    const why = r.failure()?.errorText ?? '';
    // Leaving a page aborts its open requests (the live stream among them): not a failure.
    if (why.includes('ERR_ABORTED')) return;
    problems.push(`request failed: ${r.method()} ${r.url()} ${why}`);
  });
  page.on('response', (r) => {
    if (r.status() < 400) return;
    if (allowed.some((a) => r.url().includes(a.part) && a.status === r.status())) return;
    problems.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
  });
  return { page, context, problems, allowHttpError: (part, status) => allowed.push({ part, status }) };
}

/** Signs in through the real sign-in form (no JavaScript involved) and waits for the app. */
export async function signIn(page: Page, baseUrl: string, user = ADMIN, path = '/'): Promise<void> {
  await page.goto(baseUrl + path);
  await page.waitForURL(/\/login/);
  await page.fill('#username', user.username);
  await page.fill('#password', user.password);
  await Promise.all([page.waitForURL((u) => !u.pathname.startsWith('/login')), page.click('button[type=submit]')]);
  await page.waitForSelector('#page-title');
}

export async function adminPage(browser: Browser, baseUrl: string, opts: PageOptions = {}): Promise<WatchedPage> {
  const w = await watchedPage(browser, opts);
  await signIn(w.page, baseUrl);
  return w;
}

/** Waits until the app has nothing in flight and no spinner (a screen finished loading). */
export async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() => !document.querySelector('.spinner') && !document.querySelector('.progress.on'), undefined, { timeout: 15_000 });
}

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve('axe-core/axe.min.js', { paths: [join(root, 'sidecar/ui')] }), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  nodes: string[];
}
/** The part of axe-core's API used here: AXE, evaluated in the page, defines window.axe. */
interface AxeWindow {
  axe: {
    run(
      context: Document,
      options: { resultTypes: string[] },
    ): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[] }>;
  };
}
/** axe-core on the current page (evaluated over the DevTools protocol, so the page's CSP stays as it is). */
export async function axe(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE);
  const res = await page.evaluate(async () => {
    // reason: AXE (evaluated above) defines window.axe in the page; the DOM's Window type does not declare it
    const r = await (window as unknown as AxeWindow).axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ')) }));
  });
  return res as AxeViolation[];
}
export const serious = (v: AxeViolation[]) => v.filter((x) => x.impact === 'serious' || x.impact === 'critical');

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = join(SCREENSHOT_DIR, `${name.replace(/[^\w.-]+/g, '_')}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

export interface UiServer {
  /** the running sidecar (set in the suite's before hook) */
  readonly s: TestServer;
  readonly browser: Browser;
  /** the credentials api() sends: the admin's session cookie + CSRF token, or a full-access API token */
  readonly headers: Record<string, string>;
  /**
   * The API (`/api/v1` + path) as the seeding and checking side of a browser test, with `headers`:
   * api(path, method?, json?) or api(path, { method, json, headers }).
   */
  api: ApiCall & ApiInit;
  /** Signs in through the API (the admin unless `user` is given); a session-mode api() uses that session from then on. */
  login(user?: { username: string; password: string }): Promise<{ cookie: string; csrf: string }>;
  /**
   * Seeds the file's data once the sidecar, chromium and api() are up, in the set-up's own before
   * hook (a file's before hooks at the top level are not awaited one after the other on Node 20).
   */
  setup(fn: () => Promise<void> | void): void;
}

export interface UiServerOptions {
  /** api()'s credentials: 'session' (default: the admin's session cookie and CSRF token) or 'token' (a full-access API token) */
  api?: 'session' | 'token';
  /** set nothing up: the file's tests are skipped (e.g. bin/caddy is missing) */
  skip?: boolean;
}

type Env = Record<string, string>;

/**
 * The set-up of a browser test file: a sidecar (with `env`, or what `env()` returns when the before
 * hook runs, e.g. with ports it picks), chromium, and api() signed in, made in a before hook and
 * closed in an after hook. The file seeds its data in ui.setup(fn), which runs after them.
 */
export function uiServer(env: Env | (() => Env | Promise<Env>) = {}, opts: StartOptions = {}, o: UiServerOptions = {}): UiServer {
  let s: TestServer | undefined;
  let browser: Browser | undefined;
  let headers: Record<string, string> = {};
  const setups: (() => Promise<void> | void)[] = [];
  const signIn = async (user = ADMIN) => {
    const session = await login(s!, user);
    if (o.api !== 'token') headers = { cookie: session.cookie, 'x-csrf-token': session.csrf };
    return session;
  };
  before(async () => {
    if (o.skip) return;
    s = await startTestServer(typeof env === 'function' ? await env() : env, opts);
    browser = await openBrowser();
    if (o.api === 'token') headers = bearer(await apiToken(s));
    else await signIn();
    for (const fn of setups) await fn();
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });
  const request = (path: string, a: string | ReqInit = 'GET', json?: unknown) => {
    const init = typeof a === 'string' ? { method: a, json } : a;
    return s!.req<unknown>(`/api/v1${path}`, { ...init, headers: { ...headers, ...(init.headers as Record<string, string> | undefined) } });
  };
  // reason: the body's type is the caller's request's (ApiCall, ApiInit), as with s.req()
  const api = request as ApiCall & ApiInit;
  return {
    get s() {
      return s!;
    },
    get browser() {
      return browser!;
    },
    get headers() {
      return headers;
    },
    api,
    login: signIn,
    setup: (fn) => void setups.push(fn),
  };
}
