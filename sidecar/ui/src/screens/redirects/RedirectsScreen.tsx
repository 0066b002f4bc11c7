// Redirect hosts: the list (domain → target, status code, enabled switch), create, edit, delete; and
// the default site, what a host name nothing serves gets (Gatehouse's 404 page, a redirect or the
// admin's own HTML). Live: reloads on the redirect events.
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { confirmAction, Modal, toast } from '../../components/dialog';
import { CheckField, FormErrors, SelectField, SubmitButton, TextArea, TextField, useForm } from '../../components/form';
import { DataTable, type Column } from '../../components/table';
import { Badge, Card, EmptyState, ErrorBanner, PageHeader, Spinner } from '../../components/ui';
import { useApi, useTitle } from '../../hooks';
import { t, useLang } from '../../i18n';
import type {
  DefaultSite,
  DefaultSiteBody,
  DefaultSiteResponse,
  RedirectHost,
  RedirectHostBody,
  RedirectHostDeletedResponse,
  RedirectHostResponse,
  RedirectHostsResponse,
} from '../../protocol';
import './redirects.css';

const EVENTS = ['redirect_host_created', 'redirect_host_updated', 'redirect_host_deleted'];
const CODES = [301, 302, 307, 308] as const;

function RedirectForm(props: { host?: RedirectHost; onDone: (r: RedirectHost) => void; onCancel: () => void }) {
  useLang();
  const h = props.host;
  const form = useForm({
    domain: h?.domain ?? '',
    target_url: h?.target_url ?? '',
    status_code: h?.status_code ?? 301,
    preserve_path: h?.preserve_path ?? true,
    enabled: h?.enabled ?? true,
    description: h?.description ?? '',
  });
  return (
    <form
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        let saved: RedirectHost | undefined;
        void form
          .submit(async (v) => {
            const body: RedirectHostBody = {
              domain: v.domain,
              target_url: v.target_url,
              status_code: v.status_code as RedirectHostBody['status_code'],
              preserve_path: v.preserve_path,
              enabled: v.enabled,
              description: v.description.trim() ? v.description : null,
            };
            saved = (await api<RedirectHostResponse>(h ? 'PUT' : 'POST', h ? `/redirect-hosts/${h.id}` : '/redirect-hosts', body)).redirect_host;
          })
          .then((ok) => {
            if (ok && saved) props.onDone(saved);
          });
      }}
    >
      <FormErrors form={form} />
      <TextField form={form} name="domain" label={t('redirects.domain')} hint={t('redirects.domainHint')} required autoComplete="off" />
      <TextField form={form} name="target_url" label={t('redirects.target')} hint={t('redirects.targetHint')} required autoComplete="off" />
      <SelectField
        form={form}
        name="status_code"
        numeric
        label={t('redirects.status')}
        options={CODES.map((c) => ({ value: c, label: t(`redirects.status${c}`) }))}
      />
      <CheckField form={form} name="preserve_path" label={t('redirects.preservePath')} hint={t('redirects.preservePathHint')} />
      <CheckField form={form} name="enabled" label={t('redirects.enabled')} />
      <TextArea form={form} name="description" label={t('redirects.description')} rows={2} />
      <div class="form-actions">
        <button type="button" class="btn" onClick={props.onCancel}>
          {t('common.cancel')}
        </button>
        <SubmitButton form={form} label={h ? t('common.save') : t('common.create')} />
      </div>
    </form>
  );
}

function DefaultSiteForm(props: { site: DefaultSite; onSaved: () => void }) {
  useLang();
  const form = useForm({ mode: props.site.mode as string, redirect_url: props.site.redirect_url ?? '', html: props.site.html ?? '' });
  const mode = form.values.mode;
  return (
    <form
      noValidate
      aria-label={t('redirects.defaultTitle')}
      onSubmit={(e) => {
        e.preventDefault();
        void form
          .submit(async (v) => {
            const body: DefaultSiteBody = {
              mode: v.mode as DefaultSiteBody['mode'],
              redirect_url: v.redirect_url.trim() ? v.redirect_url : null,
              html: v.html.trim() ? v.html : null,
            };
            await api<DefaultSiteResponse>('PUT', '/settings/default-site', body);
          })
          .then((ok) => {
            if (ok) props.onSaved();
          });
      }}
    >
      <FormErrors form={form} shown={['mode', 'redirect_url', 'html']} />
      <SelectField
        form={form}
        name="mode"
        label={t('redirects.mode')}
        options={[
          { value: 'default', label: t('redirects.modeDefault') },
          { value: 'redirect', label: t('redirects.modeRedirect') },
          { value: 'custom_html', label: t('redirects.modeCustom') },
        ]}
      />
      {(mode === 'redirect' || form.errors.redirect_url) && (
        <TextField form={form} name="redirect_url" label={t('redirects.redirectUrl')} hint={t('redirects.targetHint')} autoComplete="off" />
      )}
      {(mode === 'custom_html' || form.errors.html) && <TextArea form={form} name="html" label={t('redirects.html')} hint={t('redirects.htmlHint')} rows={8} />}
      <div class="form-actions">
        <SubmitButton form={form} label={t('common.save')} />
      </div>
    </form>
  );
}

export default function RedirectsScreen() {
  useLang();
  useTitle(t('redirects.title'));
  const { data, error, reload } = useApi<RedirectHostsResponse>('/redirect-hosts', EVENTS);
  const site = useApi<DefaultSiteResponse>('/settings/default-site');
  const [dialog, setDialog] = useState<{ host?: RedirectHost } | null>(null);
  const remove = async (r: RedirectHost) => {
    if (!(await confirmAction(t('redirects.confirmDelete', { domain: r.domain }), { confirmLabel: t('common.delete') }))) return;
    try {
      await api<RedirectHostDeletedResponse>('DELETE', `/redirect-hosts/${r.id}`);
      toast(t('redirects.deletedToast', { domain: r.domain }));
      reload();
    } catch (err) {
      toast((err as Error).message, 'bad');
    }
  };
  const toggle = async (r: RedirectHost) => {
    try {
      const res = await api<RedirectHostResponse>('PUT', `/redirect-hosts/${r.id}`, { enabled: !r.enabled });
      toast(t(res.redirect_host.enabled ? 'redirects.enabledToast' : 'redirects.disabledToast', { domain: r.domain }));
      reload();
    } catch (err) {
      toast((err as Error).message, 'bad');
    }
  };
  const columns: Column<RedirectHost>[] = [
    {
      key: 'domain',
      label: t('redirects.domain'),
      render: (r) => (
        <span class="redirect-pair" aria-label={t('redirects.arrow', { domain: r.domain, target: r.target_url })}>
          <strong>{r.domain}</strong>
          <span aria-hidden="true"> → </span>
          <span class="redirect-target">{r.target_url}</span>
        </span>
      ),
    },
    {
      key: 'status',
      label: t('redirects.status'),
      render: (r) => (
        <span class="redirect-status">
          <Badge tone="info">{r.status_code}</Badge>
          {r.preserve_path && <Badge tone="muted">{t('redirects.keepsPath')}</Badge>}
        </span>
      ),
    },
    { key: 'description', label: t('redirects.description'), render: (r) => r.description ?? '' },
    {
      key: 'enabled',
      label: t('redirects.enabled'),
      render: (r) => (
        <input
          type="checkbox"
          role="switch"
          checked={r.enabled}
          aria-label={t('redirects.enabledNamed', { domain: r.domain })}
          onChange={() => void toggle(r)}
        />
      ),
    },
    {
      key: 'actions',
      label: t('common.actions'),
      class: 'actions',
      render: (r) => (
        <div class="row-actions">
          <button type="button" class="btn small" aria-label={t('redirects.editNamed', { domain: r.domain })} onClick={() => setDialog({ host: r })}>
            {t('common.edit')}
          </button>
          <button type="button" class="btn small danger" aria-label={t('redirects.deleteNamed', { domain: r.domain })} onClick={() => remove(r)}>
            {t('common.delete')}
          </button>
        </div>
      ),
    },
  ];
  return (
    <>
      <PageHeader title={t('redirects.title')}>
        <button type="button" class="btn primary" onClick={() => setDialog({})}>
          {t('redirects.add')}
        </button>
      </PageHeader>
      <p class="muted">{t('redirects.intro')}</p>
      <ErrorBanner error={error} onRetry={reload} />
      {!data ? (
        error ? null : (
          <Spinner />
        )
      ) : (
        <DataTable
          label={t('redirects.table')}
          columns={columns}
          rows={data.redirect_hosts}
          rowKey={(r) => r.id}
          empty={
            <EmptyState title={t('redirects.emptyTitle')} text={t('redirects.emptyText')}>
              <button type="button" class="btn primary" onClick={() => setDialog({})}>
                {t('redirects.add')}
              </button>
            </EmptyState>
          }
        />
      )}
      <Card title={t('redirects.defaultTitle')} class="default-site">
        <p class="muted">{t('redirects.defaultIntro')}</p>
        <ErrorBanner error={site.error} onRetry={site.reload} />
        {site.data ? (
          <DefaultSiteForm
            site={site.data.default_site}
            onSaved={() => {
              toast(t('redirects.defaultSaved'));
              site.reload();
            }}
          />
        ) : (
          !site.error && <Spinner />
        )}
      </Card>
      <Modal
        open={!!dialog}
        onClose={() => setDialog(null)}
        title={dialog?.host ? t('redirects.editTitle', { domain: dialog.host.domain }) : t('redirects.createTitle')}
      >
        {dialog && (
          <RedirectForm
            host={dialog.host}
            onCancel={() => setDialog(null)}
            onDone={(r) => {
              toast(t(dialog.host ? 'redirects.savedToast' : 'redirects.createdToast', { domain: r.domain }));
              setDialog(null);
              reload();
            }}
          />
        )}
      </Modal>
    </>
  );
}
