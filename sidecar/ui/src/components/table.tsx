// Lists that can grow to 10,000 rows: the API filters, sorts and pages; the URL query holds the
// state (so a filtered list can be bookmarked and Back works); the table only shows one page.
import type { ComponentChildren } from 'preact';
import { useMemo } from 'preact/hooks';
import { qs } from '../api';
import { useApi, type Loaded } from '../hooks';
import { t } from '../i18n';
import { setQuery, useLocation } from '../router';

export interface Column<R> {
  key: string;
  label: string;
  /** The API's sort key; the header becomes a sort button. */
  sort?: string;
  render: (row: R) => ComponentChildren;
  class?: string;
}

/**
 * The list behind a screen: `path` (e.g. '/peers') with the URL's filter parameters named in
 * `filters`, plus sort/limit/offset, fetched from the API; reloads on the live event types given.
 */
export function useList<T>(path: string, filters: string[], reloadOn: string[] = [], defaults: { limit?: number; sort?: string } = {}) {
  const { query } = useLocation();
  const params = useMemo(() => {
    const p: Record<string, string | number | undefined> = {};
    for (const f of filters) p[f] = query.get(f) ?? undefined;
    p.sort = query.get('sort') ?? defaults.sort;
    p.limit = Number(query.get('limit') ?? defaults.limit ?? 50);
    p.offset = Number(query.get('offset') ?? 0);
    return p;
  }, [query.toString()]);
  const loaded: Loaded<T> = useApi<T>(`${path}${qs(params)}`, reloadOn);
  return { ...loaded, params, setFilter: (name: string, value: string | null) => setQuery({ [name]: value, offset: null }) };
}

export function DataTable<R>(props: {
  label: string;
  columns: Column<R>[];
  rows: R[];
  rowKey: (r: R) => string | number;
  sort?: string;
  onSort?: (sort: string) => void;
  selected?: Set<string | number>;
  onSelect?: (next: Set<string | number>) => void;
  rowName?: (r: R) => string;
  empty?: ComponentChildren;
}) {
  const { columns, rows, selected, onSelect } = props;
  if (!rows.length && props.empty) return <>{props.empty}</>;
  const allOn = !!selected && rows.length > 0 && rows.every((r) => selected.has(props.rowKey(r)));
  return (
    <div class="table-wrap">
      <table class="table" aria-label={props.label}>
        <thead>
          <tr>
            {onSelect && (
              <th class="sel">
                <input
                  type="checkbox"
                  aria-label={t('common.selectAll')}
                  checked={allOn}
                  onChange={() => onSelect(allOn ? new Set() : new Set(rows.map(props.rowKey)))}
                />
              </th>
            )}
            {columns.map((c) => {
              const dir = props.sort === c.sort ? 'ascending' : props.sort === `-${c.sort}` ? 'descending' : undefined;
              return (
                <th key={c.key} class={c.class} aria-sort={c.sort ? (dir ?? 'none') : undefined} scope="col">
                  {c.sort && props.onSort ? (
                    <button
                      type="button"
                      class="sort"
                      title={t('common.sortBy', { col: c.label })}
                      onClick={() => props.onSort!(dir === 'ascending' ? `-${c.sort}` : c.sort!)}
                    >
                      {c.label}
                      <span aria-hidden="true">{dir === 'ascending' ? ' ▲' : dir === 'descending' ? ' ▼' : ''}</span>
                    </button>
                  ) : (
                    c.label
                  )}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => {
            const k = props.rowKey(r);
            return (
              <tr key={k} class={selected?.has(k) ? 'selected' : undefined}>
                {onSelect && (
                  <td class="sel">
                    <input
                      type="checkbox"
                      aria-label={t('common.selectRow', { name: props.rowName?.(r) ?? String(k) })}
                      checked={selected!.has(k)}
                      onChange={() => {
                        const n = new Set(selected);
                        if (n.has(k)) n.delete(k);
                        else n.add(k);
                        onSelect(n);
                      }}
                    />
                  </td>
                )}
                {columns.map((c) => (
                  <td key={c.key} class={c.class} data-label={c.label}>
                    {c.render(r)}
                  </td>
                ))}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

export function Pager(props: { total: number; limit: number; offset: number }) {
  const { total, limit, offset } = props;
  if (total <= limit && offset === 0) return null;
  const from = total ? offset + 1 : 0;
  const to = Math.min(offset + limit, total);
  return (
    <nav class="pager" aria-label={t('common.pageOf', { from, to, total })}>
      <span>{t('common.pageOf', { from, to, total })}</span>
      <button type="button" class="btn small" disabled={offset === 0} onClick={() => setQuery({ offset: Math.max(0, offset - limit) || null })}>
        {t('common.prev')}
      </button>
      <button type="button" class="btn small" disabled={to >= total} onClick={() => setQuery({ offset: offset + limit })}>
        {t('common.next')}
      </button>
      <label class="rows">
        {t('common.rows')}{' '}
        <select value={limit} onChange={(e) => setQuery({ limit: e.currentTarget.value, offset: null })}>
          {[25, 50, 100, 200].map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
      </label>
    </nav>
  );
}

/** A search box bound to the URL's `q` (debounced by the caller's list reload). */
export function SearchBox(props: { label: string; value: string; onChange: (v: string) => void }) {
  return (
    <input
      type="search"
      class="search"
      aria-label={props.label}
      placeholder={props.label}
      value={props.value}
      onInput={(e) => props.onChange(e.currentTarget.value)}
    />
  );
}
