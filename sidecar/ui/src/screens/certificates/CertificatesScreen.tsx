// Custom certificates: the list (names, issuer, expiry with days left, the routes using each), the
// upload dialog (paste the PEM text or pick the files) and delete (refused while routes use it: the
// server's answer names them). A route chooses its certificate in the route form.
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { confirmAction, Modal, toast } from '../../components/dialog';
import { FormErrors, SubmitButton, TextArea, TextField, useForm, type Form } from '../../components/form';
import { DataTable, type Column } from '../../components/table';
import { Badge, EmptyState, ErrorBanner, Link, PageHeader, Spinner } from '../../components/ui';
import { useApi, useTitle } from '../../hooks';
import { t, useLang } from '../../i18n';
import type { Certificate, CertificateResponse, CertificatesResponse, CreateCertificateBody } from '../../protocol';

const EVENTS = ['certificate_created', 'certificate_replaced', 'certificate_deleted', 'route_created', 'route_updated', 'route_deleted'];

/** The upload form holds the create body as it is sent. */
type UploadValues = CreateCertificateBody;

/** A file input that puts the picked file's text into a field. */
function FilePick(props: { form: Form<UploadValues>; name: 'certificate_pem' | 'private_key_pem'; label: string }) {
  return (
    <label class="btn small file-pick">
      {props.label}
      <input
        type="file"
        accept=".pem,.crt,.cer,.key,text/plain"
        class="sr-only"
        onChange={(e) => {
          const file = e.currentTarget.files?.[0];
          if (file) void file.text().then((text) => props.form.set(props.name, text));
        }}
      />
    </label>
  );
}

function UploadForm(props: { onDone: (c: Certificate) => void; onCancel: () => void }) {
  useLang();
  const form = useForm<UploadValues>({ name: '', certificate_pem: '', private_key_pem: '' });
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        let r: CertificateResponse | undefined;
        void form
          .submit(async (v) => {
            r = await api<CertificateResponse>('POST', '/certificates', v);
          })
          .then((ok) => {
            if (ok && r) props.onDone(r.certificate);
          });
      }}
    >
      <FormErrors form={form} />
      <TextField form={form} name="name" label={t('certificates.name')} required autoComplete="off" />
      <TextArea form={form} name="certificate_pem" label={t('certificates.certPem')} hint={t('certificates.certPemHint')} rows={6} />
      <FilePick form={form} name="certificate_pem" label={t('certificates.pickCert')} />
      <TextArea form={form} name="private_key_pem" label={t('certificates.keyPem')} hint={t('certificates.keyPemHint')} rows={6} />
      <FilePick form={form} name="private_key_pem" label={t('certificates.pickKey')} />
      <div class="form-actions">
        <button type="button" class="btn" onClick={props.onCancel}>
          {t('common.cancel')}
        </button>
        <SubmitButton form={form} label={t('certificates.upload')} />
      </div>
    </form>
  );
}

const TONE: Record<Certificate['state'], 'ok' | 'warn' | 'bad'> = { valid: 'ok', expiring: 'warn', expired: 'bad' };

function fmtDay(iso: string): string {
  return new Date(iso).toISOString().slice(0, 10);
}

export default function CertificatesScreen() {
  useLang();
  useTitle(t('certificates.title'));
  const { data, error, reload } = useApi<CertificatesResponse>('/certificates', EVENTS);
  const [open, setOpen] = useState(false);
  const remove = async (c: Certificate) => {
    if (!(await confirmAction(t('certificates.confirmDelete', { name: c.name }), { confirmLabel: t('common.delete') }))) return;
    try {
      await api('DELETE', `/certificates/${c.id}`);
      toast(t('certificates.deletedToast', { name: c.name }));
      reload();
    } catch (err) {
      toast((err as Error).message, 'bad');
    }
  };
  const columns: Column<Certificate>[] = [
    { key: 'name', label: t('certificates.name'), render: (c) => <strong>{c.name}</strong> },
    { key: 'names', label: t('certificates.subjectNames'), render: (c) => c.subject_names.join(', ') },
    { key: 'issuer', label: t('certificates.issuer'), render: (c) => c.issuer },
    {
      key: 'expiry',
      label: t('certificates.expires'),
      render: (c) => (
        <>
          <Badge tone={TONE[c.state]}>{c.state === 'expired' ? t('certificates.expired') : t('certificates.daysLeft', { n: c.days_left })}</Badge>{' '}
          <span class="hint">{fmtDay(c.not_after)}</span>
        </>
      ),
    },
    {
      key: 'routes',
      label: t('certificates.usedBy'),
      render: (c) =>
        c.routes.length
          ? c.routes.map((r, i) => (
              <>
                {i > 0 && ', '}
                <Link href={`/routes/${r.id}`}>{r.domain}</Link>
              </>
            ))
          : t('certificates.unused'),
    },
    {
      key: 'actions',
      label: t('common.actions'),
      class: 'actions',
      render: (c) => (
        <button type="button" class="btn small danger" aria-label={t('certificates.deleteNamed', { name: c.name })} onClick={() => remove(c)}>
          {t('common.delete')}
        </button>
      ),
    },
  ];
  return (
    <>
      <PageHeader title={t('certificates.title')}>
        <button type="button" class="btn primary" onClick={() => setOpen(true)}>
          {t('certificates.add')}
        </button>
      </PageHeader>
      <p class="hint">{t('certificates.intro')}</p>
      <ErrorBanner error={error} onRetry={reload} />
      {!data ? (
        error ? null : (
          <Spinner />
        )
      ) : (
        <DataTable
          label={t('certificates.table')}
          columns={columns}
          rows={data.certificates}
          rowKey={(c) => String(c.id)}
          empty={
            <EmptyState title={t('certificates.emptyTitle')} text={t('certificates.emptyText')}>
              <button type="button" class="btn primary" onClick={() => setOpen(true)}>
                {t('certificates.add')}
              </button>
            </EmptyState>
          }
        />
      )}
      <Modal open={open} onClose={() => setOpen(false)} title={t('certificates.uploadTitle')}>
        {open && (
          <UploadForm
            onCancel={() => setOpen(false)}
            onDone={(c) => {
              toast(t('certificates.uploadedToast', { name: c.name }));
              setOpen(false);
              reload();
            }}
          />
        )}
      </Modal>
    </>
  );
}
