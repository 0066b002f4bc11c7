// The live connection: one EventSource on GET /api/v1/events for the whole app. The browser
// reconnects by itself and sends Last-Event-ID, so the server replays what was missed; when it
// cannot (restart, too old) it sends `reset` and every open screen reloads its data.
import { useEffect, useRef } from 'preact/hooks';
import { createStore } from './store';
import type { LivePayload, LiveType } from './protocol';

export type LiveState = 'connecting' | 'open' | 'down';
export const liveState = createStore<LiveState>('connecting');
/** One message of the stream: its id, its event name and its JSON data. */
export interface LiveEvent<T = unknown> {
  id: string;
  type: string;
  data: T;
}
type Handler = (e: LiveEvent) => void;

const handlers = new Map<string, Set<Handler>>();
let source: EventSource | null = null;
let retryTimer: ReturnType<typeof setTimeout> | undefined;
let lastId = '';

function listen(type: string): void {
  source?.addEventListener(type, (ev) => dispatch(type, ev as MessageEvent));
}
function dispatch(type: string, ev: MessageEvent): void {
  if (ev.lastEventId) lastId = ev.lastEventId;
  let data: unknown = ev.data;
  try {
    data = JSON.parse(ev.data);
  } catch {
    /* plain text */
  }
  const e = { id: ev.lastEventId, type, data };
  for (const h of [...(handlers.get(type) ?? [])]) h(e);
  for (const h of [...(handlers.get('*') ?? [])]) h(e);
}

export function startLive(): void {
  if (source || typeof EventSource === 'undefined') return;
  const url = lastId ? `/api/v1/events?last_event_id=${encodeURIComponent(lastId)}` : '/api/v1/events';
  source = new EventSource(url, { withCredentials: true });
  liveState.set('connecting');
  source.onopen = () => liveState.set('open');
  source.onerror = () => {
    liveState.set('down');
    // EventSource retries by itself unless the server refused (closed state): then back off and reopen.
    if (source?.readyState === EventSource.CLOSED) {
      source = null;
      clearTimeout(retryTimer);
      retryTimer = setTimeout(startLive, 3000);
    }
  };
  for (const type of handlers.keys()) if (type !== '*') listen(type);
  listen('reset');
  // `ready` carries the stream's position: kept so a stream reopened by hand resumes from there.
  if (!handlers.has('ready')) listen('ready');
}

/**
 * Subscribe while mounted; '*' gets every event. Handlers see the latest closure. Named event kinds
 * give the handler their payload's type (protocol.ts LivePayload); other names (reset, '*', a list
 * built at run time) give unknown data.
 */
export function useLive<K extends LiveType>(types: K | K[], handler: (e: LiveEvent<LivePayload<K>>) => void): void;
export function useLive(types: string | string[], handler: Handler): void;
export function useLive(types: string | string[], handler: Handler): void {
  const ref = useRef(handler);
  ref.current = handler;
  const key = Array.isArray(types) ? types.join(',') : types;
  useEffect(() => {
    const list = key.split(',');
    const h: Handler = (e) => ref.current(e);
    for (const type of list) {
      let set = handlers.get(type);
      if (!set) {
        set = new Set();
        handlers.set(type, set);
        if (type !== '*' && type !== 'reset' && type !== 'ready') listen(type);
      }
      set.add(h);
    }
    return () => {
      for (const type of list) handlers.get(type)?.delete(h);
    };
  }, [key]);
}
