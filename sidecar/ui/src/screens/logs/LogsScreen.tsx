// Logs: the activity log (filters event_type, severity, source, from/until dates; paging; new rows
// live from `activity_recorded`) and the proxy's access log, each with CSV/JSON export links. The
// filters and the page live in the URL query, so a filtered view can be bookmarked.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { qs } from '../../api';
import { FormErrors, SelectField, TextField, useForm } from '../../components/form';
import { DataTable, Pager, type Column } from '../../components/table';
import { Badge, EmptyState, ErrorBanner, PageHeader, Spinner, Tabs } from '../../components/ui';
import { useApi, useTitle } from '../../hooks';
import { fmtBytes, fmtDate, t, useLang, wordRow } from '../../i18n';
import { useLive } from '../../live';
import { setQuery } from '../../router';
import type { ScreenProps } from '../define';
import '../../components/admin.css';

import type { AccessEntry as Access, AccessResponse, ActivityEntry as Entry, ActivityResponse } from '../../protocol';

const SEVERITIES = ['info', 'warning', 'error', 'critical'];
const FILTERS = ['severity', 'source', 'event_type', 'since', 'until'] as const;
const ACCESS_FILTERS = ['host', 'method', 'status', 'since', 'until'] as const;
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const sevTone = (s: string) => (s === 'critical' || s === 'error' ? 'bad' : s === 'warning' ? 'warn' : 'info');

/** A day from the URL (YYYY-MM-DD, the user's day) as epoch ms of its start or end. */
function day(v: string | null, end: boolean): number | undefined {
  if (!v || !/^\d{4}-\d{2}-\d{2}$/.test(v)) return undefined;
  const d = new Date(`${v}T${end ? '23:59:59.999' : '00:00:00'}`).getTime();
  return Number.isNaN(d) ? undefined : d;
}

/** The activity log's API filter parameters from the URL. */
function apiFilters(query: URLSearchParams): Record<string, string | number | undefined> {
  return {
    severity: query.get('severity') ?? undefined,
    source: query.get('source') ?? undefined,
    event_type: query.get('event_type') ?? undefined,
    since: day(query.get('since'), false),
    until: day(query.get('until'), true),
  };
}

/**
 * The filter form of a log tab: its inputs start from the URL query (and follow it on Back), Apply
 * writes them to the query (first page), Clear removes them.
 */
function useFilterForm<K extends string>(names: readonly K[], query: URLSearchParams) {
  const fromQuery = () => Object.fromEntries(names.map((f) => [f, query.get(f) ?? ''])) as Record<K, string>;
  const form = useForm(fromQuery());
  useEffect(() => form.setAll(fromQuery()), [query.toString()]);
  return {
    form,
    apply: () => setQuery({ ...Object.fromEntries(names.map((f) => [f, form.values[f] || null])), offset: null }),
    clear: () => setQuery({ ...Object.fromEntries(names.map((f) => [f, null])), offset: null }),
  };
}

export default function LogsScreen({ query }: ScreenProps) {
  useLang();
  useTitle(t('logs.title'));
  const tab = query.get('tab') === 'access' ? 'access' : 'activity';
  return (
    <>
      <PageHeader title={t('logs.title')} />
      <Tabs
        label={t('logs.tabs')}
        value={tab}
        onChange={(k) =>
          setQuery(Object.fromEntries([['tab', k === 'activity' ? null : k], ['offset', null], ...[...FILTERS, ...ACCESS_FILTERS].map((f) => [f, null])]))
        }
        tabs={[
          { key: 'activity', label: t('logs.activity') },
          { key: 'access', label: t('logs.access') },
        ]}
      />
      <div role="tabpanel" aria-labelledby={`tab-${tab}`}>
        {tab === 'activity' ? <ActivityLog query={query} /> : <AccessLog query={query} />}
      </div>
    </>
  );
}

function ActivityLog({ query }: { query: URLSearchParams }) {
  const limit = Number(query.get('limit') ?? 50);
  const offset = Number(query.get('offset') ?? 0);
  const filters = apiFilters(query);
  const path = `/logs/activity${qs({ ...filters, limit, offset })}`;
  const { data, error, reload } = useApi<ActivityResponse>(path);
  const [fresh, setFresh] = useState<Entry[]>([]);
  useEffect(() => setFresh([]), [data]);
  useLive('activity_recorded', (e) => {
    const entry: Entry | undefined = e.data.entry;
    if (!entry || offset !== 0) return;
    if (
      (filters.severity && entry.severity !== filters.severity) ||
      (filters.source && entry.source !== filters.source) ||
      (filters.event_type && entry.event_type !== filters.event_type)
    )
      return;
    const at = new Date(entry.created_at).getTime();
    if ((filters.since !== undefined && at < Number(filters.since)) || (filters.until !== undefined && at > Number(filters.until))) return;
    setFresh((l) => (l.some((x) => x.id === entry.id) ? l : [entry, ...l]));
  });
  const { form, apply, clear } = useFilterForm(FILTERS, query);
  const known = useMemo(() => new Set((data?.entries ?? []).map((x) => x.id)), [data]);
  const newOnes = fresh.filter((x) => !known.has(x.id));
  const rows = [...newOnes, ...(data?.entries ?? [])].slice(0, limit);
  const freshIds = new Set(newOnes.map((x) => x.id));
  const exportQs = (format: string) => qs({ ...filters, format });

  const columns: Column<Entry>[] = [
    { key: 'time', label: t('logs.time'), render: (r) => <time dateTime={r.created_at}>{fmtDate(r.created_at)}</time> },
    {
      key: 'severity',
      label: t('logs.severity'),
      render: (r) => <Badge tone={sevTone(r.severity)}>{SEVERITIES.includes(r.severity) ? t(`logs.sev_${r.severity}`) : r.severity}</Badge>,
    },
    { key: 'source', label: t('logs.source'), render: (r) => r.source },
    { key: 'event', label: t('logs.eventType'), render: (r) => <code>{r.event_type}</code> },
    {
      key: 'message',
      label: t('logs.message'),
      class: 'log-msg',
      render: (r) => (
        <>
          {freshIds.has(r.id) && <Badge tone="ok">{t('logs.new')}</Badge>}
          {wordRow(r)}
        </>
      ),
    },
    { key: 'ip', label: t('logs.ip'), render: (r) => r.ip ?? '–' },
  ];

  return (
    <>
      <form
        class="filters"
        aria-label={t('common.filter')}
        onSubmit={(e) => {
          e.preventDefault();
          apply();
        }}
      >
        <SelectField
          form={form}
          name="severity"
          label={t('logs.severity')}
          empty={t('logs.anySeverity')}
          options={SEVERITIES.map((s) => ({ value: s, label: t(`logs.sev_${s}`) }))}
        />
        <TextField form={form} name="source" label={t('logs.source')} />
        <TextField form={form} name="event_type" label={t('logs.eventType')} />
        <TextField form={form} name="since" type="date" label={t('logs.since')} />
        <TextField form={form} name="until" type="date" label={t('logs.until')} />
        <div class="field form-actions">
          <button type="submit" class="btn primary">
            {t('logs.apply')}
          </button>
          <button type="button" class="btn" onClick={clear}>
            {t('logs.clear')}
          </button>
        </div>
      </form>
      <FormErrors form={form} />
      <div class="exports">
        <span>{t('logs.export')}:</span>
        <a class="btn small" href={`/api/v1/logs/activity/export${exportQs('csv')}`} download aria-label={t('logs.exportActivityCsv')}>
          {t('logs.exportCsv')}
        </a>
        <a class="btn small" href={`/api/v1/logs/activity/export${exportQs('json')}`} download aria-label={t('logs.exportActivityJson')}>
          {t('logs.exportJson')}
        </a>
        <span class="muted">{t('logs.live')}</span>
      </div>
      <ErrorBanner error={error} onRetry={reload} />
      {!data ? (
        !error && <Spinner />
      ) : (
        <>
          <DataTable
            label={t('logs.activity')}
            columns={columns}
            rows={rows}
            rowKey={(r) => r.id}
            empty={<EmptyState title={t('logs.emptyActivity')} text={t('logs.emptyActivityText')} />}
          />
          <Pager total={data.total + newOnes.length} limit={limit} offset={offset} />
        </>
      )}
    </>
  );
}

function AccessLog({ query }: { query: URLSearchParams }) {
  const limit = Number(query.get('limit') ?? 50);
  const offset = Number(query.get('offset') ?? 0);
  const filters = {
    host: query.get('host') ?? undefined,
    method: query.get('method') ?? undefined,
    status: query.get('status') ?? undefined,
    since: day(query.get('since'), false),
    until: day(query.get('until'), true),
  };
  const { data, error, reload } = useApi<AccessResponse>(`/logs/access${qs({ ...filters, limit, offset })}`);
  const { form, apply, clear } = useFilterForm(ACCESS_FILTERS, query);
  const exportQs = (format: string) => qs({ ...filters, format });
  const columns: Column<Access>[] = [
    { key: 'time', label: t('logs.time'), render: (r) => <time dateTime={r.time}>{fmtDate(r.time)}</time> },
    { key: 'host', label: t('logs.host'), render: (r) => r.host },
    { key: 'method', label: t('logs.method'), render: (r) => <code>{r.method}</code> },
    { key: 'uri', label: t('logs.uri'), class: 'log-msg', render: (r) => <code>{r.uri}</code> },
    { key: 'status', label: t('logs.status'), render: (r) => <Badge tone={r.status >= 500 ? 'bad' : r.status >= 400 ? 'warn' : 'ok'}>{r.status}</Badge> },
    { key: 'duration', label: t('logs.duration'), render: (r) => t('logs.ms', { n: Math.round(r.duration_ms) }) },
    { key: 'size', label: t('logs.size'), render: (r) => fmtBytes(r.size) },
    { key: 'client', label: t('logs.client'), render: (r) => r.client_ip },
    { key: 'user', label: t('logs.authUser'), render: (r) => r.auth_user ?? '–' },
  ];
  return (
    <>
      <form
        class="filters"
        aria-label={t('common.filter')}
        onSubmit={(e) => {
          e.preventDefault();
          apply();
        }}
      >
        <TextField form={form} name="host" label={t('logs.host')} />
        <SelectField form={form} name="method" label={t('logs.method')} empty={t('logs.anyMethod')} options={METHODS.map((m) => ({ value: m, label: m }))} />
        <TextField form={form} name="status" label={t('logs.status')} inputMode="numeric" />
        <TextField form={form} name="since" type="date" label={t('logs.since')} />
        <TextField form={form} name="until" type="date" label={t('logs.until')} />
        <div class="field form-actions">
          <button type="submit" class="btn primary">
            {t('logs.apply')}
          </button>
          <button type="button" class="btn" onClick={clear}>
            {t('logs.clear')}
          </button>
        </div>
      </form>
      <div class="exports">
        <span>{t('logs.export')}:</span>
        <a class="btn small" href={`/api/v1/logs/access/export${exportQs('csv')}`} download aria-label={t('logs.exportAccessCsv')}>
          {t('logs.exportCsv')}
        </a>
        <a class="btn small" href={`/api/v1/logs/access/export${exportQs('json')}`} download aria-label={t('logs.exportAccessJson')}>
          {t('logs.exportJson')}
        </a>
      </div>
      <ErrorBanner error={error} onRetry={reload} />
      {!data ? (
        !error && <Spinner />
      ) : (
        <>
          <DataTable
            label={t('logs.access')}
            columns={columns}
            rows={data.entries}
            rowKey={(r) => r.id}
            empty={<EmptyState title={t('logs.emptyAccess')} text={t('logs.emptyAccessText')} />}
          />
          <Pager total={data.total} limit={limit} offset={offset} />
        </>
      )}
    </>
  );
}
