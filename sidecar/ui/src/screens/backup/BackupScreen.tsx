// Backup and restore (GET /settings/backup with the passphrase in X-Backup-Passphrase; POST
// /settings/backup/restore: a dry run first, its list shown, then the real restore once confirmed)
// and the auto-backup jobs (GET/POST/PUT/DELETE /settings/autobackup, POST …/:id/run).
import { useState } from 'preact/hooks';
import { api, ApiError, failureWords } from '../../api';
import { confirmAction, Modal, toast } from '../../components/dialog';
import { FormErrors, NumberField, SelectField, SubmitButton, TextField, useForm, type Form } from '../../components/form';
import { Badge, Card, EmptyState, ErrorBanner, PageHeader, Spinner } from '../../components/ui';
import { useApi, useTitle } from '../../hooks';
import { hasKey, t, useLang, word } from '../../i18n';
import '../../components/admin.css';

import type { BackupJob as Job, JobBody, MayBeEmpty, JobListResponse, JobResponse, RestoreResponse as Plan } from '../../protocol';

/** The server's field names for the passphrase and mode, as this screen's inputs are named (ids are unique per page). */
function renamed(fields: Record<string, string> | undefined, prefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields ?? {})) out[k === 'passphrase' || k === 'mode' ? `${prefix}${k}` : k] = v;
  return out;
}

/**
 * The passphrase typed twice: a typo in a backup's passphrase makes the backup unrestorable, so the
 * two must match before anything is sent (the error shows next to the second field).
 */
function checkConfirmed(passphrase: string, confirm: string, confirmField: string): void {
  if (passphrase !== confirm) throw new ApiError(400, t('backup.passphraseMismatch'), { [confirmField]: t('backup.passphraseMismatch') });
}

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : t('backup.never'));

function DownloadCard() {
  const form = useForm({ download_passphrase: '', download_passphrase_confirm: '' });
  return (
    <Card title={t('backup.download')}>
      <p class="muted">{t('backup.downloadIntro')}</p>
      <form
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          const ok = await form.submit(async (v) => {
            checkConfirmed(v.download_passphrase, v.download_passphrase_confirm, 'download_passphrase_confirm');
            const res = await fetch('/api/v1/settings/backup?format=download', {
              headers: { Accept: 'application/json', 'X-Backup-Passphrase': v.download_passphrase },
              credentials: 'same-origin',
            });
            if (!res.ok) {
              const data = await res.json().catch(() => ({}));
              {
                const words = failureWords(data, res.statusText);
                throw new ApiError(res.status, words.message, renamed(words.fields, 'download_'), data);
              }
            }
            const name = /filename="([^"]+)"/.exec(res.headers.get('Content-Disposition') ?? '')?.[1] ?? 'gatehouse-backup.json';
            const url = URL.createObjectURL(await res.blob());
            const a = document.createElement('a');
            a.href = url;
            a.download = name;
            document.body.append(a);
            a.click();
            a.remove();
            setTimeout(() => URL.revokeObjectURL(url), 10_000);
          });
          if (ok) {
            toast(t('backup.downloaded'));
            form.setAll({ download_passphrase: '', download_passphrase_confirm: '' });
          }
        }}
      >
        <FormErrors form={form} />
        <TextField
          form={form}
          name="download_passphrase"
          type="password"
          label={t('backup.passphrase')}
          hint={t('backup.passphraseHint')}
          autoComplete="new-password"
          required
        />
        <TextField form={form} name="download_passphrase_confirm" type="password" label={t('backup.passphraseConfirm')} autoComplete="new-password" required />
        <div class="form-actions">
          <SubmitButton form={form} label={t('backup.downloadButton')} />
        </div>
      </form>
    </Card>
  );
}

/** A section of the backup as a person calls it (backup.section_<name>), else its name. */
function sectionName(name: string): string {
  const key = `backup.section_${name}`;
  return hasKey(key) ? t(key) : name;
}

/** An entry of the preview: a setting by what it is (backup.setting_<key>, the key as a detail), others by their label. */
function ItemName(props: { section: string; label: string }) {
  const key = `backup.setting_${props.label.replace(/\./g, '_')}`;
  if (props.section !== 'settings' || !hasKey(key)) return <>{props.label}</>;
  return (
    <>
      {t(key)} <code class="muted backup-key">{props.label}</code>
    </>
  );
}

function Items(props: { section: string; items: { id: string | number; label: string }[] }) {
  if (!props.items.length) return <>0</>;
  return (
    <>
      {`${props.items.length}: `}
      {props.items.map((x, i) => (
        <span key={x.id}>
          {i > 0 && ', '}
          <ItemName section={props.section} label={x.label} />
        </span>
      ))}
    </>
  );
}

function PlanTable(props: { plan: Plan }) {
  const rows = Object.entries(props.plan.plan).filter(([, p]) => p.created.length || p.changed.length || p.removed.length);
  return (
    <div class="table-wrap">
      <table class="table">
        <caption>{t('backup.previewTitle')}</caption>
        <thead>
          <tr>
            <th scope="col">{t('backup.section')}</th>
            <th scope="col">{t('backup.created')}</th>
            <th scope="col">{t('backup.changed')}</th>
            <th scope="col">{t('backup.removed')}</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(([name, p]) => (
            <tr key={name} data-section={name}>
              <th scope="row">{sectionName(name)}</th>
              <td>
                <Items section={name} items={p.created} />
              </td>
              <td>
                <Items section={name} items={p.changed} />
              </td>
              <td>
                <Items section={name} items={p.removed} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted">{`${t('backup.unchanged')}: ${props.plan.summary.unchanged}`}</p>
    </div>
  );
}

function RestoreCard() {
  const form = useForm({ restore_passphrase: '', restore_mode: 'merge', file: '' });
  const [file, setFile] = useState<File | null>(null);
  const [plan, setPlan] = useState<Plan | null>(null);
  const [busy, setBusy] = useState(false);
  const send = async (dryRun: boolean) => {
    if (!file) throw new ApiError(400, t('backup.noFile'), { file: t('backup.noFile') });
    const fd = new FormData();
    fd.set('passphrase', form.values.restore_passphrase);
    fd.set('file', file, file.name);
    try {
      return await api<Plan>('POST', `/settings/backup/restore?mode=${form.values.restore_mode}${dryRun ? '&dry_run=1' : ''}`, fd);
    } catch (err) {
      if (err instanceof ApiError) throw new ApiError(err.status, err.message, renamed(err.fields, 'restore_'), err.body);
      throw err;
    }
  };
  return (
    <Card title={t('backup.restore')}>
      <p class="muted">{t('backup.restoreIntro')}</p>
      <form
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          setPlan(null);
          await form.submit(async () => setPlan(await send(true)));
        }}
      >
        <FormErrors form={form} />
        <div class="field">
          <label for="f-file">{t('backup.file')}</label>
          <input
            id="f-file"
            type="file"
            accept="application/json,.json"
            aria-invalid={form.errors.file ? 'true' : undefined}
            onChange={(e) => {
              setFile((e.currentTarget as HTMLInputElement).files?.[0] ?? null);
              setPlan(null);
            }}
          />
          {form.errors.file && <p class="field-error">{form.errors.file}</p>}
        </div>
        <TextField form={form} name="restore_passphrase" type="password" label={t('backup.passphrase')} autoComplete="off" required />
        <SelectField
          form={form}
          name="restore_mode"
          label={t('backup.mode')}
          options={[
            { value: 'merge', label: t('backup.modeMerge') },
            { value: 'replace', label: t('backup.modeReplace') },
          ]}
        />
        <div class="form-actions">
          <SubmitButton form={form} label={t('backup.preview')} />
        </div>
      </form>
      {plan && (
        <>
          <PlanTable plan={plan} />
          <div class="form-actions">
            <button
              type="button"
              class="btn danger"
              disabled={busy}
              aria-busy={busy}
              onClick={async () => {
                if (!(await confirmAction(t('backup.confirmRestore', { mode: form.values.restore_mode })))) return;
                setBusy(true);
                try {
                  await send(false);
                  toast(t('backup.restored'));
                  setPlan(null);
                  if (form.values.restore_mode === 'replace') location.assign('/login');
                } catch (err) {
                  toast(String((err as Error).message), 'bad');
                } finally {
                  setBusy(false);
                }
              }}
            >
              {t('backup.apply')}
            </button>
          </div>
        </>
      )}
    </Card>
  );
}

const emptyJob = {
  name: '',
  schedule: 'daily',
  keep: 7 as number | null,
  target: 'local' as JobBody['target'],
  passphrase: '',
  passphrase_confirm: '',
  s3: { bucket: '', prefix: '', region: '', endpoint: '', access_key_id: '', secret_access_key: '' },
};
type JobForm = typeof emptyJob;

type JobRequest = MayBeEmpty<Partial<JobBody>, 'keep'>;

function jobBody(v: JobForm, editing: boolean): JobRequest {
  const body: JobRequest = { name: v.name, schedule: v.schedule, keep: v.keep, target: v.target };
  if (v.passphrase || !editing) body.passphrase = v.passphrase;
  if (v.target === 's3') {
    const s3: NonNullable<JobBody['s3']> = {
      bucket: v.s3.bucket,
      prefix: v.s3.prefix,
      access_key_id: v.s3.access_key_id,
      region: v.s3.region || null,
      endpoint: v.s3.endpoint || null,
    };
    if (v.s3.secret_access_key) s3.secret_access_key = v.s3.secret_access_key;
    body.s3 = s3;
  }
  return body;
}

function JobFields(props: { form: Form<JobForm>; editing: boolean; secretSet?: boolean }) {
  const { form } = props;
  return (
    <>
      <FormErrors form={form} />
      <div class="form-grid">
        <TextField form={form} name="name" label={t('backup.name')} required />
        <TextField form={form} name="schedule" label={t('backup.schedule')} hint={t('backup.scheduleHint')} required />
        <NumberField form={form} name="keep" label={t('backup.keep')} min={1} max={1000} required />
        <SelectField
          form={form}
          name="target"
          label={t('backup.target')}
          options={[
            { value: 'local', label: t('backup.targetLocal') },
            { value: 's3', label: t('backup.targetS3') },
          ]}
        />
        <TextField
          form={form}
          name="passphrase"
          type="password"
          label={t('backup.passphrase')}
          hint={props.editing ? t('backup.secretKeep') : t('backup.jobPassphraseHint')}
          autoComplete="new-password"
          required={!props.editing}
        />
        {(!props.editing || form.values.passphrase !== '') && (
          <TextField form={form} name="passphrase_confirm" type="password" label={t('backup.passphraseConfirm')} autoComplete="new-password" required />
        )}
      </div>
      {form.values.target === 's3' && (
        <div class="form-grid">
          <TextField form={form} name="s3.bucket" label={t('backup.bucket')} required />
          <TextField form={form} name="s3.prefix" label={t('backup.prefix')} />
          <TextField form={form} name="s3.region" label={t('backup.region')} />
          <TextField form={form} name="s3.endpoint" type="url" label={t('backup.endpoint')} />
          <TextField form={form} name="s3.access_key_id" label={t('backup.accessKey')} autoComplete="off" required />
          <TextField
            form={form}
            name="s3.secret_access_key"
            type="password"
            label={t('backup.secretKey')}
            hint={props.secretSet ? t('backup.secretKeep') : undefined}
            autoComplete="new-password"
            required={!props.secretSet}
          />
        </div>
      )}
    </>
  );
}

function JobsCard() {
  const { data, error, reload } = useApi<JobListResponse>('/settings/autobackup', ['backup_completed', 'backup_failed']);
  const edit = useForm<JobForm>(structuredClone(emptyJob));
  /** the job being edited, 'new' while creating, null when the dialog is closed */
  const [editing, setEditing] = useState<Job | 'new' | null>(null);
  const [running, setRunning] = useState<number | null>(null);
  const jobs = data?.jobs;
  return (
    <Card title={t('backup.jobs')}>
      <p class="muted">{t('backup.jobsIntro')}</p>
      <ErrorBanner error={error} onRetry={reload} />
      {!jobs ? (
        !error && <Spinner />
      ) : jobs.length === 0 ? (
        <EmptyState title={t('backup.noJobs')} text={t('backup.noJobsText')} />
      ) : (
        <div class="table-wrap">
          <table class="table">
            <thead>
              <tr>
                <th scope="col">{t('backup.name')}</th>
                <th scope="col">{t('backup.schedule')}</th>
                <th scope="col">{t('backup.target')}</th>
                <th scope="col">{t('backup.lastRun')}</th>
                <th scope="col">{t('backup.nextRun')}</th>
                <th scope="col">
                  <span class="sr-only">{t('backup.edit')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {jobs.map((j) => (
                <tr key={j.id} data-job={j.name}>
                  <th scope="row">{j.name}</th>
                  <td>{`${j.schedule} · ${t('backup.keep')} ${j.keep}`}</td>
                  <td>{j.target === 's3' ? `s3://${j.s3?.bucket ?? ''}/${j.s3?.prefix ?? ''}` : t('backup.targetLocal')}</td>
                  <td>
                    {j.last_run ? (
                      <Badge tone={j.last_run.status === 'ok' ? 'ok' : 'bad'}>{j.last_run.status === 'ok' ? t('backup.ok') : t('backup.failed')}</Badge>
                    ) : null}
                    {` ${when(j.last_run?.at ?? null)}`}
                    {j.last_run?.error && <div class="muted">{word(j.last_run.error_code, j.last_run.error)}</div>}
                  </td>
                  <td>{j.enabled ? when(j.next_run_at) : '–'}</td>
                  <td class="actions">
                    <button
                      type="button"
                      class="btn"
                      disabled={running === j.id}
                      aria-busy={running === j.id}
                      onClick={async () => {
                        setRunning(j.id);
                        try {
                          const r = await api<JobResponse>('POST', `/settings/autobackup/${j.id}/run`);
                          if (r.job.last_run?.status === 'ok') toast(t('backup.ranOk'));
                          else toast(t('backup.ranFailed', { error: word(r.job.last_run?.error_code, r.job.last_run?.error ?? '') }), 'bad');
                          reload();
                        } catch (err) {
                          toast(String((err as Error).message), 'bad');
                        } finally {
                          setRunning(null);
                        }
                      }}
                    >
                      {running === j.id ? t('backup.running') : t('backup.run')}
                    </button>
                    <button
                      type="button"
                      class="btn"
                      onClick={() => {
                        edit.setAll({
                          ...structuredClone(emptyJob),
                          name: j.name,
                          schedule: j.schedule,
                          keep: j.keep,
                          target: j.target,
                          s3: {
                            ...emptyJob.s3,
                            ...(j.s3
                              ? {
                                  bucket: j.s3.bucket,
                                  prefix: j.s3.prefix,
                                  region: j.s3.region ?? '',
                                  endpoint: j.s3.endpoint ?? '',
                                  access_key_id: j.s3.access_key_id,
                                }
                              : {}),
                          },
                        });
                        setEditing(j);
                      }}
                    >
                      {t('backup.edit')}
                    </button>
                    <button
                      type="button"
                      class="btn danger"
                      onClick={async () => {
                        if (!(await confirmAction(t('backup.confirmDelete', { name: j.name })))) return;
                        await api('DELETE', `/settings/autobackup/${j.id}`).catch((err) => toast(String((err as Error).message), 'bad'));
                        reload();
                      }}
                    >
                      {t('backup.delete')}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div class="form-actions">
        <button
          type="button"
          class="btn primary"
          onClick={() => {
            edit.setAll(structuredClone(emptyJob));
            setEditing('new');
          }}
        >
          {t('backup.create')}
        </button>
      </div>
      <Modal
        title={editing === 'new' ? t('backup.create') : editing ? t('backup.editTitle', { name: editing.name }) : ''}
        open={editing !== null}
        onClose={() => setEditing(null)}
      >
        {editing && (
          <form
            noValidate
            onSubmit={async (e) => {
              e.preventDefault();
              const isNew = editing === 'new';
              const ok = await edit.submit((v) => {
                // a new passphrase (always for a new job) is typed twice
                if (isNew || v.passphrase) checkConfirmed(v.passphrase, v.passphrase_confirm, 'passphrase_confirm');
                return isNew ? api('POST', '/settings/autobackup', jobBody(v, false)) : api('PUT', `/settings/autobackup/${editing.id}`, jobBody(v, true));
              });
              if (ok) {
                toast(isNew ? t('backup.created_') : t('backup.saved'));
                setEditing(null);
                reload();
              }
            }}
          >
            <JobFields form={edit} editing={editing !== 'new'} secretSet={editing !== 'new' && editing.s3?.secret_set} />
            <div class="form-actions">
              <button type="button" class="btn" onClick={() => setEditing(null)}>
                {t('backup.cancel')}
              </button>
              <SubmitButton form={edit} label={t('common.save')} />
            </div>
          </form>
        )}
      </Modal>
    </Card>
  );
}

export default function BackupScreen() {
  useLang();
  useTitle(t('backup.title'));
  return (
    <>
      <PageHeader title={t('backup.title')} />
      <DownloadCard />
      <RestoreCard />
      <JobsCard />
    </>
  );
}
