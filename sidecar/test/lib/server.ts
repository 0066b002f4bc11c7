// Test harness: a real sidecar on a random loopback port with its own temporary data directory and
// SQLite file (or PostgreSQL when TEST_DATABASE_URL is set: each server gets a fresh schema).
// To restart a server on the same state, pass the first one's GATEHOUSE_DATA_DIR (and DATABASE_URL
// on PostgreSQL) in env: a data directory passed in is the caller's and is not removed on close.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type Config } from '../../src/config.js';
import { startServer, type Running, type StartOptions } from '../../src/server.js';
import { createLogger } from '../../src/util/logger.js';
import type { BodyOf } from './api-types.js';
import { TEST_PUBLIC_KEY_PEM, testLicenceKey } from './licence.js';

/** What a request helper takes: fetch's options, and `json` for a JSON body. */
export type ReqInit<M extends string = string> = Omit<RequestInit, 'method'> & { method?: M; json?: unknown };

/** The body a request reads: T when the caller names it (`req<T>()`), else the one of its method and path (BodyOf). */
export type Named<T, M extends string, P extends string> = [T] extends [never] ? BodyOf<M, P> : T;

/**
 * A typed request: the answer's body is typed by the method and path (api-types.ts: the served
 * endpoint's response schema, with a refusal's fields beside it); `req<T>()` names the body where
 * the types cannot follow the path (unknown otherwise). A wrapper that passes its own method and
 * path on writes `req<never, P, M>()`.
 */
export interface TypedReq {
  <T = never, P extends string = string, M extends string = 'GET'>(
    p: P,
    init?: ReqInit<[T] extends [never] ? M : string>,
  ): Promise<Response & { data: Named<T, M, P> }>;
}

export const ADMIN = { username: 'admin', password: 'admin-password-1' };

export interface TestServer extends Running {
  dataDir: string;
  /** PostgreSQL URL of this server's database (undefined on SQLite) */
  databaseUrl?: string;
  /**
   * fetch against the server; `data` is the parsed JSON body (the text when it is not JSON), typed by
   * the method and path (TypedReq).
   */
  req: TypedReq;
}

/** A test's helper for the API (`/api/v1` + path): call('/peers', 'POST', body), typed like s.req() by method and path. */
export interface ApiCall {
  <T = never, P extends string = string, M extends string = 'GET'>(
    p: P,
    method?: [T] extends [never] ? M : string,
    json?: unknown,
  ): Promise<Response & { data: Named<T, M, `/api/v1${P}`> }>;
}

/** call(path, method?, json?) against the API of a server with headers, both read at each call (tests set them in before()). */
export function apiCall(server: () => TestServer, headers: () => Record<string, string>): ApiCall {
  const call = (p: string, method = 'GET', json?: unknown) =>
    server().req<unknown>(`/api/v1${p}`, { method, headers: headers(), ...(json !== undefined ? { json } : {}) });
  // reason: the body's type is the caller's request's (ApiCall), as with s.req()
  return call as ApiCall;
}

/** callOn(server, headers, path, method?, json?): the API of any server with any headers, typed by method and path as apiCall is. */
export function callOn<T = never, P extends string = string, M extends string = 'GET'>(
  server: TestServer,
  headers: Record<string, string>,
  p: P,
  method?: [T] extends [never] ? M : string,
  json?: unknown,
) {
  return apiCall(
    () => server,
    () => headers,
  )<T, P, M>(p, method, json);
}

/** A test's helper for the API (`/api/v1` + path) in fetch's form: api('/peers', { method: 'POST', json }), typed like s.req(). */
export interface ApiInit {
  <T = never, P extends string = string, M extends string = 'GET'>(
    p: P,
    init?: ReqInit<[T] extends [never] ? M : string>,
  ): Promise<Response & { data: Named<T, M, `/api/v1${P}`> }>;
}

/** api(path, init?) against the API of a server with headers (read at each call), the caller's own headers over them. */
export function apiInit(server: () => TestServer, headers: () => Record<string, string>): ApiInit {
  const api = (p: string, init: ReqInit = {}) =>
    server().req<unknown>(`/api/v1${p}`, { ...init, headers: { ...headers(), ...(init.headers as Record<string, string> | undefined) } });
  // reason: the body's type is the caller's request's (ApiInit), as with s.req()
  return api as ApiInit;
}

export async function startTestServer(env: Record<string, string> = {}, opts: StartOptions = {}): Promise<TestServer> {
  const ownDir = !env.GATEHOUSE_DATA_DIR;
  const dataDir = env.GATEHOUSE_DATA_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-test-'));
  const dbEnv: Record<string, string> = {};
  if (process.env.TEST_DATABASE_URL && !env.DATABASE_URL) dbEnv.DATABASE_URL = await freshPgDatabase(process.env.TEST_DATABASE_URL);
  const config: Config = loadConfig({
    // The test key pair is trusted, and unless the test sets GATEHOUSE_LICENCE_KEY itself ('' = none:
    // the community fallback) a perpetual test licence with every feature is activated at start.
    GATEHOUSE_LICENCE_PUBLIC_KEY: TEST_PUBLIC_KEY_PEM,
    ...('GATEHOUSE_LICENCE_KEY' in env
      ? {}
      : { GATEHOUSE_LICENCE_KEY: testLicenceKey({ plan: 'test-all', issued_at: '2000-01-01T00:00:00.000Z', expires_at: null }) }),
    GATEHOUSE_DATA_DIR: dataDir,
    GATEHOUSE_ADMIN_USER: ADMIN.username,
    GATEHOUSE_ADMIN_PASSWORD: ADMIN.password,
    GATEHOUSE_MANAGE_CADDY: 'false',
    GATEHOUSE_WG_MANAGE: 'false',
    // Tests play the companion from 127.0.0.1, not from a gateway's tunnel address: the main
    // listener takes gateway tokens from any source, as with a companion that reaches the server
    // outside its tunnel. Tests of the binding (the product default) pass 'false'; the e2e
    // servers, whose companions use real tunnels, run with the default (test/lib/e2e-server.ts).
    GATEHOUSE_GATEWAY_TOKEN_ANY_SOURCE: 'true',
    ...dbEnv,
    ...env,
  });
  const running = await startServer(config, {
    listen: false,
    startFeatures: false,
    log: createLogger(process.env.TEST_LOG ? 'debug' : 'error', process.env.TEST_LOG === '0'),
    ...opts,
  });
  const close = async () => {
    await running.close();
    if (ownDir) fs.rmSync(dataDir, { recursive: true, force: true });
  };
  return { ...running, close, dataDir, databaseUrl: config.databaseUrl, req: requestAt(running.url) };
}

/** The typed request of a server at baseUrl (TestServer.req): fetch without following redirects, the JSON answer parsed (its text when it is not JSON). */
export function requestAt(baseUrl: string): TypedReq {
  const req = async (p: string, init: ReqInit = {}): Promise<Response & { data: unknown }> => {
    const headers = new Headers(init.headers);
    let body = init.body;
    if (init.json !== undefined) {
      headers.set('content-type', 'application/json');
      body = JSON.stringify(init.json);
    }
    const res = await fetch(baseUrl + p, { ...init, headers, body, redirect: 'manual' });
    const text = await res.text();
    let data: unknown = text;
    try {
      data = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return Object.assign(res, { data });
  };
  // reason: the body's type is the caller's request's (TypedReq); the parsed JSON is that body
  return req as TypedReq;
}

let pgCounter = 0;
/** Creates a new database on the PostgreSQL server of baseUrl and returns its URL. */
export async function freshPgDatabase(baseUrl: string): Promise<string> {
  const { default: pg } = await import('pg');
  const name = `gh_test_${process.pid}_${Date.now()}_${pgCounter++}`;
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const u = new URL(baseUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Signs in as the bootstrap admin; returns a cookie header and the CSRF token. */
export async function login(s: TestServer, user = ADMIN): Promise<{ cookie: string; csrf: string }> {
  const res = await s.req('/login', { method: 'POST', json: user, headers: { accept: 'application/json' } });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.data)}`);
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  return { cookie, csrf: res.data.csrfToken! };
}

/** A full-access API token (or with the given scopes). */
export async function apiToken(s: TestServer, scopes: string[] = ['full-access']): Promise<string> {
  const { cookie, csrf } = await login(s);
  const res = await s.req('/api/v1/tokens', {
    method: 'POST',
    json: { name: `t-${scopes.join('-')}-${Math.random()}`, scopes },
    headers: { cookie, 'x-csrf-token': csrf },
  });
  if (res.status !== 201) throw new Error(`token create failed: ${res.status} ${JSON.stringify(res.data)}`);
  return res.data.token;
}

export const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
