// Maintenance windows of a route (GET/PUT /rdp/:id/maintenance {windows: [{from, to, note}]}): a
// desktop client asking to connect inside a window is refused with its note. Times are entered in
// the browser's local time and sent as ISO-8601 (UTC); the window in force is marked.
import { api } from '../../api';
import { toast } from '../../components/dialog';
import { FormErrors, SubmitButton, TextField, useForm } from '../../components/form';
import { Badge, Card, ErrorBanner, Spinner } from '../../components/ui';
import { useApi } from '../../hooks';
import { fmtDate, t } from '../../i18n';
import type { MaintenanceResponse } from '../../protocol';
import { activeWindow, type MaintenanceWindow, type RdpRoute } from './model';

const pad = (n: number) => String(n).padStart(2, '0');
/** ISO-8601 → the value of an <input type=datetime-local> (local time, minutes). */
export function toLocalInput(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
/** The input's local time → ISO-8601 UTC; what cannot be read is sent as typed (the server says why). */
export function fromLocalInput(v: string): string {
  const d = new Date(v);
  return v && !Number.isNaN(d.getTime()) ? d.toISOString() : v;
}

export function MaintenanceCard(props: { route: RdpRoute; onChange: () => void }) {
  const { data, error, reload } = useApi<MaintenanceResponse>(`/rdp/${props.route.id}/maintenance`);
  return (
    <Card title={t('rdp.maintTitle')} class="rdp-maint">
      <p class="hint">{t('rdp.maintHint')}</p>
      <ErrorBanner error={error} onRetry={reload} />
      {!data ? (
        !error && <Spinner />
      ) : (
        <MaintenanceForm
          key={JSON.stringify(data.windows)}
          route={props.route}
          windows={data.windows}
          onSaved={() => {
            reload();
            props.onChange();
          }}
        />
      )}
    </Card>
  );
}

function MaintenanceForm(props: { route: RdpRoute; windows: MaintenanceWindow[]; onSaved: () => void }) {
  const form = useForm({ windows: props.windows.map((w) => ({ from: toLocalInput(w.from), to: toLocalInput(w.to), note: w.note ?? '' })) });
  const list = form.values.windows;
  const active = activeWindow(props.windows);
  const add = () => {
    const start = new Date(Date.now() + 3600_000);
    start.setMinutes(0, 0, 0);
    const end = new Date(start.getTime() + 2 * 3600_000);
    form.set('windows', [...list, { from: toLocalInput(start.toISOString()), to: toLocalInput(end.toISOString()), note: '' }]);
  };
  const remove = (i: number) =>
    form.set(
      'windows',
      list.filter((_, j) => j !== i),
    );
  const save = async (e: Event) => {
    e.preventDefault();
    const ok = await form.submit(async (v) => {
      await api('PUT', `/rdp/${props.route.id}/maintenance`, {
        windows: v.windows.map((w) => ({ from: fromLocalInput(w.from), to: fromLocalInput(w.to), note: w.note.trim() })),
      });
    });
    if (ok) {
      toast(t('rdp.maintSaved'));
      props.onSaved();
    }
  };
  return (
    <form onSubmit={save} noValidate aria-label={t('rdp.maintTitle')}>
      {active && (
        <p class="banner warn" role="status">
          {t('rdp.maintActive', { to: fmtDate(active.to), note: active.note || '–' })}
        </p>
      )}
      {list.length === 0 && <p class="muted">{t('rdp.maintNone')}</p>}
      <ol class="rdp-windows">
        {list.map((w, i) => {
          const isActive = !!active && fromLocalInput(w.from) === active.from && fromLocalInput(w.to) === active.to;
          return (
            <li key={i} class="rdp-window">
              <fieldset>
                <legend>
                  {t('rdp.maintWindowN', { n: i + 1 })} {isActive && <Badge tone="warn">{t('rdp.maintNow')}</Badge>}
                </legend>
                <div class="form-grid">
                  <TextField form={form} name={`windows.${i}.from`} type="datetime-local" label={t('rdp.maintFrom')} required />
                  <TextField form={form} name={`windows.${i}.to`} type="datetime-local" label={t('rdp.maintTo')} required />
                  <TextField form={form} name={`windows.${i}.note`} label={t('rdp.maintNote')} hint={t('rdp.maintNoteHint')} />
                </div>
                <button type="button" class="btn small" onClick={() => remove(i)} aria-label={t('rdp.maintRemoveN', { n: i + 1 })}>
                  {t('rdp.maintRemove')}
                </button>
              </fieldset>
            </li>
          );
        })}
      </ol>
      <FormErrors form={form} />
      <div class="form-actions">
        <button type="button" class="btn" onClick={add}>
          {t('rdp.maintAdd')}
        </button>
        <SubmitButton form={form} label={t('rdp.maintSave')} />
      </div>
    </form>
  );
}
