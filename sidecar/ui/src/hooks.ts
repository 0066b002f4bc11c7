// Data hooks for screens: load from the API, reload on demand or when live events say so.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, get } from './api';
import { useLive } from './live';

export interface Loaded<T> {
  data: T | null;
  error: ApiError | null;
  loading: boolean;
  reload: () => void;
}

/**
 * GET path (relative to /api/v1) whenever it changes; `reloadOn` names live event types after which
 * the data is fetched again (debounced), plus `reset` (the stream could not resume).
 */
export function useApi<T>(path: string | null, reloadOn: string[] = []): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: ApiError | null; loading: boolean }>({ data: null, error: null, loading: !!path });
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  useEffect(() => {
    if (!path) return;
    const ctl = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    get<T>(path, ctl.signal).then(
      (data) => setState({ data, error: null, loading: false }),
      (error) => {
        if (!ctl.signal.aborted)
          setState((s) => ({ data: s.data, error: error instanceof ApiError ? error : new ApiError(0, String(error?.message ?? error)), loading: false }));
      },
    );
    return () => ctl.abort();
  }, [path, tick]);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useLive([...reloadOn, 'reset'], () => {
    clearTimeout(timer.current);
    timer.current = setTimeout(reload, 250);
  });
  useEffect(() => () => clearTimeout(timer.current), []);
  return { ...state, reload };
}

/** Sets document.title for the screen. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Gatehouse`;
  }, [title]);
}
