// Webhooks: the list (with delivery counts, test, enable/disable, edit, delete), create and edit
// with the event kinds as checkboxes (the kinds come from GET /webhooks/events), and a webhook's
// page /webhooks/:id with its delivery log (status, attempts, response code, last error, body),
// paged by the API and reloaded live (webhook_delivery_updated).
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { confirmAction, Modal, toast } from '../../components/dialog';
import { CheckField, FormErrors, NumberField, SubmitButton, TextField, useForm } from '../../components/form';
import { GroupedCheckGroup } from '../../components/checkgroup';
import { DataTable, Pager, useList, type Column } from '../../components/table';
import { Badge, Card, CopyButton, EmptyState, ErrorBanner, Link, PageHeader, Spinner } from '../../components/ui';
import { useApi, useTitle } from '../../hooks';
import { fmtAgo, fmtDate, t, useLang, word } from '../../i18n';
import { navigate, setQuery } from '../../router';
import type { ScreenProps } from '../define';
import '../../components/admin.css';
import './webhooks.css';

import type {
  CreateWebhookBody,
  DeliveriesResponse,
  DeliveryView,
  EventKindsResponse,
  WebhookResponse,
  WebhooksResponse,
  WebhookTestResponse,
  WebhookView,
} from '../../protocol';

type Status = DeliveryView['status'];
/** Create or update (the secret only when typed); the event kinds are the names GET /webhooks/events lists, text to this app. */
type WebhookRequest = Partial<Omit<CreateWebhookBody, 'events'>> & { events: string[] };

const CHANGES = ['webhook_created', 'webhook_updated', 'webhook_enabled', 'webhook_disabled', 'webhook_deleted', 'webhook_delivery_updated'];
const tone = (s: Status) => (s === 'delivered' ? 'ok' : s === 'failed' ? 'bad' : 'warn');
const StatusBadge = (p: { status: Status }) => <Badge tone={tone(p.status)}>{t(`webhooks.st_${p.status}`)}</Badge>;
const errText = (e: unknown) => String((e as Error)?.message ?? e);

export default function WebhooksScreen({ params, query }: ScreenProps) {
  useLang();
  return params.id ? <WebhookDetail id={Number(params.id)} query={query} /> : <WebhookList query={query} />;
}

/** The actions every webhook has (list row and detail page). */
function useActions(reload: () => void) {
  const [testing, setTesting] = useState<number | null>(null);
  const [lastTest, setLastTest] = useState<{ id: number; delivery: DeliveryView } | null>(null);
  return {
    testing,
    lastTest,
    test: async (w: WebhookView) => {
      setTesting(w.id);
      try {
        const r = await api<WebhookTestResponse>('POST', `/webhooks/${w.id}/test`);
        setLastTest({ id: w.id, delivery: r.delivery });
        const d = r.delivery;
        if (d.status === 'delivered') toast(t('webhooks.testOk', { name: w.name, code: d.response_code ?? '' }));
        else
          toast(t('webhooks.testFailed', { name: w.name, error: d.last_error ? word(d.last_error_code, d.last_error) : String(d.response_code ?? '') }), 'bad');
        reload();
      } catch (e) {
        toast(errText(e), 'bad');
      } finally {
        setTesting(null);
      }
    },
    toggle: async (w: WebhookView) => {
      try {
        const r = await api<WebhookResponse>('PUT', `/webhooks/${w.id}/toggle`);
        toast(t(r.webhook.enabled ? 'webhooks.toggledOn' : 'webhooks.toggledOff', { name: w.name }));
        reload();
      } catch (e) {
        toast(errText(e), 'bad');
      }
    },
    remove: async (w: WebhookView, after?: () => void) => {
      if (!(await confirmAction(t('webhooks.deleteConfirm', { name: w.name }), { confirmLabel: t('common.delete') }))) return;
      try {
        await api('DELETE', `/webhooks/${w.id}`);
        toast(t('webhooks.deleted', { name: w.name }));
        (after ?? reload)();
      } catch (e) {
        toast(errText(e), 'bad');
      }
    },
  };
}

function TestResult(props: { result: { delivery: DeliveryView } | null; name: string }) {
  const d = props.result?.delivery;
  if (!d) return null;
  return (
    <div class={`banner ${d.status === 'delivered' ? 'info' : 'error'} webhook-test-result`} role="status">
      <strong>{t('webhooks.lastTest')}</strong> <StatusBadge status={d.status} />{' '}
      {d.status === 'delivered'
        ? t('webhooks.testOk', { name: props.name, code: d.response_code ?? '' })
        : t('webhooks.testFailed', { name: props.name, error: d.last_error ? word(d.last_error_code, d.last_error) : String(d.response_code ?? '') })}
    </div>
  );
}

function WebhookList({ query }: { query: URLSearchParams }) {
  useTitle(t('webhooks.title'));
  const { data, error, reload } = useApi<WebhooksResponse>('/webhooks', CHANGES);
  const actions = useActions(reload);
  const creating = query.get('new') === '1';
  const editId = Number(query.get('edit') ?? 0);
  const editing = data?.webhooks.find((w) => w.id === editId) ?? null;
  const tested = actions.lastTest && data?.webhooks.find((w) => w.id === actions.lastTest!.id);

  const columns: Column<WebhookView>[] = [
    {
      key: 'name',
      label: t('webhooks.name'),
      render: (r) => (
        <Link href={`/webhooks/${r.id}`}>
          <strong>{r.name}</strong>
        </Link>
      ),
    },
    { key: 'url', label: t('webhooks.url'), render: (r) => <code class="webhook-url">{r.url}</code> },
    { key: 'events', label: t('webhooks.events'), render: (r) => <span title={r.events.join(', ')}>{t('webhooks.eventsCount', { n: r.events.length })}</span> },
    {
      key: 'status',
      label: t('webhooks.status'),
      render: (r) => (r.enabled ? <Badge tone="ok">{t('common.enabled')}</Badge> : <Badge tone="muted">{t('common.disabled')}</Badge>),
    },
    { key: 'deliveries', label: t('webhooks.deliveries'), render: (r) => <span class="muted">{t('webhooks.counts', r.deliveries)}</span> },
    {
      key: 'last',
      label: t('webhooks.lastDelivery'),
      render: (r) =>
        r.last_delivery ? (
          <span>
            <StatusBadge status={r.last_delivery.status} /> {fmtAgo(r.last_delivery.at)}
          </span>
        ) : (
          <span class="muted">{t('webhooks.noDelivery')}</span>
        ),
    },
    {
      key: 'actions',
      label: t('common.actions'),
      render: (r) => (
        <span class="row-actions">
          <button
            type="button"
            class="btn small"
            disabled={actions.testing === r.id}
            aria-busy={actions.testing === r.id}
            aria-label={`${t('webhooks.test')}: ${r.name}`}
            onClick={() => actions.test(r)}
          >
            {actions.testing === r.id ? t('webhooks.testing') : t('webhooks.test')}
          </button>
          <button
            type="button"
            class="btn small"
            aria-label={`${r.enabled ? t('common.disable') : t('common.enable')}: ${r.name}`}
            onClick={() => actions.toggle(r)}
          >
            {r.enabled ? t('common.disable') : t('common.enable')}
          </button>
          <button type="button" class="btn small" aria-label={`${t('common.edit')}: ${r.name}`} onClick={() => setQuery({ edit: r.id })}>
            {t('common.edit')}
          </button>
          <button type="button" class="btn small" aria-label={`${t('common.delete')}: ${r.name}`} onClick={() => actions.remove(r)}>
            {t('common.delete')}
          </button>
        </span>
      ),
    },
  ];

  return (
    <>
      <PageHeader title={t('webhooks.title')}>
        <button type="button" class="btn primary" onClick={() => setQuery({ new: '1' })}>
          {t('webhooks.create')}
        </button>
      </PageHeader>
      <ErrorBanner error={error} onRetry={reload} />
      {tested && <TestResult result={actions.lastTest} name={tested.name} />}
      {!data ? (
        !error && <Spinner />
      ) : (
        <DataTable
          label={t('webhooks.title')}
          columns={columns}
          rows={data.webhooks}
          rowKey={(r) => r.id}
          empty={
            <EmptyState title={t('webhooks.emptyTitle')} text={t('webhooks.emptyText')}>
              <button type="button" class="btn primary" onClick={() => setQuery({ new: '1' })}>
                {t('webhooks.create')}
              </button>
            </EmptyState>
          }
        />
      )}
      <Modal title={t('webhooks.createTitle')} open={creating} onClose={() => setQuery({ new: null })} wide>
        {creating && (
          <WebhookForm
            onDone={(w) => {
              setQuery({ new: null });
              if (w) {
                toast(t('webhooks.created', { name: w.name }));
                reload();
              }
            }}
          />
        )}
      </Modal>
      <Modal title={t('webhooks.editTitle', { name: editing?.name ?? '' })} open={!!editing} onClose={() => setQuery({ edit: null })} wide>
        {editing && (
          <WebhookForm
            webhook={editing}
            onDone={(w) => {
              setQuery({ edit: null });
              if (w) {
                toast(t('webhooks.saved', { name: w.name }));
                reload();
              }
            }}
          />
        )}
      </Modal>
    </>
  );
}

function randomSecret(): string {
  const b = new Uint8Array(24);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

type Kind = EventKindsResponse['events'][number];

/** The event kinds grouped by their area (the server lists them in area order). */
function groupsOf(kinds: Kind[]) {
  const groups: { key: string; label: string; options: { value: string; label: string; title: string }[] }[] = [];
  for (const k of kinds) {
    let g = groups.find((x) => x.key === k.area);
    if (!g) groups.push((g = { key: k.area, label: t(`webhooks.area_${k.area}`), options: [] }));
    g.options.push({ value: k.name, label: k.name, title: k.description });
  }
  return groups;
}

function WebhookForm(props: { webhook?: WebhookView; onDone: (w: WebhookView | null) => void }) {
  const w = props.webhook;
  const kinds = useApi<EventKindsResponse>('/webhooks/events');
  const [reveal, setReveal] = useState(false);
  const form = useForm<{ name: string; url: string; events: string[]; enabled: boolean; secret: string; retry_count: number | null; allow_private: boolean }>({
    name: w?.name ?? '',
    url: w?.url ?? '',
    events: w?.events ?? [],
    enabled: w?.enabled ?? true,
    secret: '',
    retry_count: w?.retry_count ?? 3,
    allow_private: w?.allow_private ?? false,
  });
  const secret = form.values.secret;
  return (
    <form
      noValidate
      onSubmit={async (e) => {
        e.preventDefault();
        let saved: WebhookView | null = null;
        const ok = await form.submit(async (v) => {
          const body: WebhookRequest = {
            name: v.name,
            url: v.url,
            events: v.events,
            enabled: v.enabled,
            retry_count: v.retry_count ?? undefined,
            allow_private: v.allow_private,
          };
          if (!w || v.secret) body.secret = v.secret;
          const r = w ? await api<WebhookResponse>('PUT', `/webhooks/${w.id}`, body) : await api<WebhookResponse>('POST', '/webhooks', body);
          saved = r.webhook;
        });
        if (ok) props.onDone(saved);
      }}
    >
      <FormErrors form={form} />
      <div class="form-grid">
        <TextField form={form} name="name" label={t('webhooks.name')} required />
        <TextField form={form} name="url" type="url" label={t('webhooks.url')} hint={t('webhooks.urlHint')} required />
      </div>
      <CheckField form={form} name="allow_private" label={t('webhooks.allowPrivate')} hint={t('webhooks.allowPrivateHint')} />
      <div class="form-grid">
        <div>
          <TextField
            form={form}
            name="secret"
            type={reveal ? 'text' : 'password'}
            autoComplete="new-password"
            label={t('webhooks.secret')}
            hint={w ? t('webhooks.secretKeep') : t('webhooks.secretHint')}
            required={!w}
          />
          <div class="webhook-secret-actions">
            <button
              type="button"
              class="btn small"
              onClick={() => {
                form.set('secret', randomSecret());
                setReveal(true);
              }}
            >
              {t('webhooks.generate')}
            </button>
            <button type="button" class="btn small" aria-pressed={reveal} aria-controls="f-secret" onClick={() => setReveal(!reveal)}>
              {reveal ? t('common.conceal') : t('common.reveal')}
            </button>
            {secret && <CopyButton text={secret} label={t('webhooks.copySecret')} />}
          </div>
          {secret && <p class="hint">{t('webhooks.secretGive')}</p>}
        </div>
        <NumberField form={form} name="retry_count" min={0} max={10} step={1} label={t('webhooks.retryCount')} hint={t('webhooks.retryHint')} />
      </div>
      <CheckField form={form} name="enabled" label={t('webhooks.enabled')} />
      {kinds.data ? (
        <div class="webhook-events">
          <GroupedCheckGroup
            name="events"
            label={t('webhooks.events')}
            value={form.values.events}
            onChange={(v) => form.set('events', v)}
            error={form.errors.events}
            groups={groupsOf(kinds.data.events)}
          />
        </div>
      ) : (
        <ErrorBanner error={kinds.error} onRetry={kinds.reload} />
      )}
      <div class="form-actions">
        <button type="button" class="btn" onClick={() => props.onDone(null)}>
          {t('common.cancel')}
        </button>
        <SubmitButton form={form} label={w ? t('common.save') : t('webhooks.create')} />
      </div>
    </form>
  );
}

function WebhookDetail({ id, query }: { id: number; query: URLSearchParams }) {
  const hook = useApi<WebhookResponse>(`/webhooks/${id}`, CHANGES);
  const log = useList<DeliveriesResponse>(`/webhooks/${id}/deliveries`, ['status'], ['webhook_delivery_updated'], { limit: 25 });
  const actions = useActions(() => {
    hook.reload();
    log.reload();
  });
  const w = hook.data?.webhook;
  useTitle(w ? `${w.name} · ${t('webhooks.title')}` : t('webhooks.title'));
  const editing = query.get('edit') === '1';
  const status = query.get('status') ?? '';

  const columns: Column<DeliveryView>[] = [
    { key: 'time', label: t('webhooks.time'), render: (r) => <span title={r.created_at}>{fmtDate(r.created_at)}</span> },
    { key: 'event', label: t('webhooks.event'), render: (r) => <code>{r.event}</code> },
    { key: 'status', label: t('webhooks.status'), render: (r) => <StatusBadge status={r.status} /> },
    { key: 'attempts', label: t('webhooks.attempts'), render: (r) => `${r.attempts} / ${r.max_attempts}` },
    { key: 'response', label: t('webhooks.response'), render: (r) => r.response_code ?? '–' },
    {
      key: 'error',
      label: t('webhooks.error'),
      render: (r) => (r.last_error ? <span class="webhook-error">{word(r.last_error_code, r.last_error)}</span> : '–'),
    },
    { key: 'next', label: t('webhooks.nextAttempt'), render: (r) => (r.next_attempt_at ? fmtDate(r.next_attempt_at) : '–') },
    {
      key: 'body',
      label: t('webhooks.body'),
      render: (r) => (
        <details>
          <summary>{t('webhooks.showBody')}</summary>
          <pre class="webhook-body">{r.body}</pre>
        </details>
      ),
    },
  ];

  if (!w)
    return (
      <>
        <PageHeader title={t('webhooks.title')} back="/webhooks" />
        <ErrorBanner error={hook.error} onRetry={hook.reload} />
        {!hook.error && <Spinner />}
      </>
    );
  return (
    <>
      <PageHeader title={w.name} back="/webhooks">
        <button type="button" class="btn" disabled={actions.testing === w.id} aria-busy={actions.testing === w.id} onClick={() => actions.test(w)}>
          {actions.testing === w.id ? t('webhooks.testing') : t('webhooks.test')}
        </button>
        <button type="button" class="btn" onClick={() => actions.toggle(w)}>
          {w.enabled ? t('common.disable') : t('common.enable')}
        </button>
        <button type="button" class="btn" onClick={() => setQuery({ edit: '1' })}>
          {t('common.edit')}
        </button>
        <button type="button" class="btn" onClick={() => actions.remove(w, () => navigate('/webhooks'))}>
          {t('common.delete')}
        </button>
      </PageHeader>
      <TestResult result={actions.lastTest} name={w.name} />
      <Card>
        <dl class="webhook-facts">
          <dt>{t('webhooks.url')}</dt>
          <dd>
            <code class="webhook-url">{w.url}</code>
          </dd>
          <dt>{t('webhooks.status')}</dt>
          <dd>{w.enabled ? <Badge tone="ok">{t('common.enabled')}</Badge> : <Badge tone="muted">{t('common.disabled')}</Badge>}</dd>
          <dt>{t('webhooks.retryCount')}</dt>
          <dd>{w.retry_count}</dd>
          <dt>{t('webhooks.deliveries')}</dt>
          <dd>{t('webhooks.counts', w.deliveries)}</dd>
          <dt>{t('webhooks.events')}</dt>
          <dd>
            <span class="chips">
              {w.events.map((e) => (
                <Badge key={e} tone="info">
                  {e}
                </Badge>
              ))}
            </span>
          </dd>
        </dl>
      </Card>
      <Card title={t('webhooks.log')}>
        <div class="webhook-filter">
          <label for="webhook-status">{t('webhooks.filterStatus')}</label>
          <select id="webhook-status" value={status} onChange={(e) => log.setFilter('status', e.currentTarget.value || null)}>
            <option value="">{t('webhooks.allStatuses')}</option>
            {(['pending', 'delivered', 'failed'] as const).map((s) => (
              <option key={s} value={s}>
                {t(`webhooks.st_${s}`)}
              </option>
            ))}
          </select>
        </div>
        <ErrorBanner error={log.error} onRetry={log.reload} />
        {!log.data ? (
          !log.error && <Spinner />
        ) : (
          <>
            <DataTable
              label={t('webhooks.log')}
              columns={columns}
              rows={log.data.deliveries}
              rowKey={(r) => r.id}
              empty={<EmptyState title={t('webhooks.logEmpty')} />}
            />
            <Pager total={log.data.total} limit={Number(log.params.limit)} offset={Number(log.params.offset)} />
          </>
        )}
      </Card>
      <Modal title={t('webhooks.editTitle', { name: w.name })} open={editing} onClose={() => setQuery({ edit: null })} wide>
        {editing && (
          <WebhookForm
            webhook={w}
            onDone={(x) => {
              setQuery({ edit: null });
              if (x) {
                toast(t('webhooks.saved', { name: x.name }));
                hook.reload();
              }
            }}
          />
        )}
      </Modal>
    </>
  );
}
