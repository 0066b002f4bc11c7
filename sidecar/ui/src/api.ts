// The UI's only way to the server: the public JSON API under /api/v1 with the session cookie and
// the CSRF token, exactly as any API client would use it. Errors arrive as ApiError with the
// server's `error` text and `fields` (per-input messages) so forms can show them next to inputs.
import { createStore } from './store';
import { word } from './i18n';
import type { MessageRef } from '@gatehouse/common/messages/index.js';

export interface ApiFailure {
  ok: false;
  error: string;
  code?: string;
  params?: Record<string, unknown>;
  fields?: Record<string, string>;
  field_codes?: Record<string, MessageRef>;
  [k: string]: unknown;
}

/** The error text and field messages of an error body in the reader's language (the server's English for a code this app does not know). */
export function failureWords(data: Partial<ApiFailure> | null | undefined, fallback: string): { message: string; fields: Record<string, string> } {
  const message = data?.code ? word({ code: data.code, params: data.params }, String(data.error ?? fallback)) : String(data?.error ?? fallback);
  const fields: Record<string, string> = { ...(data?.fields ?? {}) };
  for (const [k, ref] of Object.entries(data?.field_codes ?? {})) if (ref && typeof ref.code === 'string') fields[k] = word(ref, fields[k] ?? ref.code);
  // a conflict names the field whose value is taken (409 {field}): its message belongs at that input too
  if (typeof data?.field === 'string' && data.field && !(data.field in fields)) fields[data.field] = message;
  return { message, fields };
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly fields: Record<string, string> = {},
    readonly body: Partial<ApiFailure> = {},
  ) {
    super(message);
  }
}

let csrf: string | null = null;
export const setCsrf = (token: string | null) => {
  csrf = token;
};
export const getCsrf = () => csrf;

/** Number of requests in flight: the top bar shows progress while it is above 0. */
export const inflight = createStore(0);

export function loginUrl(): string {
  return `/login?next=${encodeURIComponent(location.pathname + location.search)}`;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

async function send(method: Method, path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  let payload: BodyInit | undefined;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  if (method !== 'GET' && csrf) headers['X-CSRF-Token'] = csrf;
  return fetch(`/api/v1${path}`, { method, headers, body: payload, credentials: 'same-origin', signal });
}

export async function api<T>(method: Method, path: string, body?: unknown, opts: { signal?: AbortSignal } = {}): Promise<T> {
  inflight.update((n) => n + 1);
  try {
    let res = await send(method, path, body, opts.signal);
    if (res.status === 403 && method !== 'GET') {
      // The session's CSRF token may have been renewed (sign-in elsewhere): fetch it and try once more.
      const peek = await res
        .clone()
        .json()
        .catch(() => ({}));
      if (peek.code === 'auth.csrf_invalid' || /csrf/i.test(String(peek.error ?? ''))) {
        const r = await send('GET', '/csrf', undefined, opts.signal);
        if (r.ok) {
          setCsrf((await r.json()).csrfToken ?? null);
          res = await send(method, path, body, opts.signal);
        }
      }
    }
    if (res.status === 401) {
      location.assign(loginUrl());
      throw new ApiError(401, 'Signed out');
    }
    const type = res.headers.get('Content-Type') ?? '';
    const data = type.includes('json') ? await res.json() : { ok: res.ok, text: await res.text() };
    if (!res.ok || data?.ok === false) {
      const words = failureWords(data, res.statusText);
      throw new ApiError(res.status, words.message, words.fields, data);
    }
    return data as T;
  } finally {
    inflight.update((n) => n - 1);
  }
}

export const get = <T>(path: string, signal?: AbortSignal) => api<T>('GET', path, undefined, { signal });

/** A query string from an object, leaving out empty values. */
export function qs(params: Record<string, string | number | boolean | null | undefined>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}
