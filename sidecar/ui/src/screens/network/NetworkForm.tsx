// The Network settings form (PUT /settings/network), shared by the Network screen and the
// first-sign-in set-up step on the dashboard. An empty field sends null: the environment (and for
// the public host, this machine's hostname) applies again. `prefill` puts the effective public host
// into the field when none is stored (the set-up step's suggestion).
import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { api, get } from '../../api';
import { FormErrors, SelectField, SubmitButton, TextField, useForm } from '../../components/form';
import { appInfo } from '../../session';
import { t, useLang } from '../../i18n';

import type { AppSettingsResponse, NetworkBody, NetworkResponse, NetworkView } from '../../protocol';

interface Values {
  public_host: string;
  public_ip: string;
  tls_mode: '' | NonNullable<NetworkBody['tls_mode']>;
  acme_email: string;
}

const orNull = (v: string) => (v.trim() === '' ? null : v.trim());

function valuesOf(n: NetworkView, prefill: boolean): Values {
  return {
    public_host: n.public_host.stored ?? (prefill ? n.public_host.value : ''),
    public_ip: n.public_ip.stored ?? '',
    tls_mode: n.tls_mode.stored ?? (prefill ? n.tls_mode.value : ''),
    acme_email: n.acme_email.stored ?? '',
  };
}

/** The reason a host cannot be reached from the internet, worded (null when it may be). */
export function unreachable(n: NetworkView): string | null {
  const p = n.public_host;
  if (p.internet_resolvable || !p.problem) return null;
  return t('network.notReachable', { host: p.value, why: t(`shell.publicHostWhy_${p.problem}`) });
}

export function NetworkForm(props: { network: NetworkView; prefill?: boolean; onSaved: (n: NetworkView) => void; children?: ComponentChildren }) {
  useLang();
  const n = props.network;
  const form = useForm<Values>(valuesOf(n, !!props.prefill));
  useEffect(() => form.setAll(valuesOf(n, !!props.prefill)), [n]);
  const hostFallback = n.public_host.env ? t('network.fallbackEnv', { value: n.public_host.env }) : t('network.fallbackHostname', { value: n.hostname });
  const ipFallback = n.public_ip.env ? t('network.fallbackEnv', { value: n.public_ip.env }) : t('network.fallbackDetected');
  const mailFallback = n.acme_email.env ? t('network.fallbackEnv', { value: n.acme_email.env }) : t('network.fallbackNone');
  return (
    <form
      noValidate
      data-testid="network-form"
      onSubmit={async (e) => {
        e.preventDefault();
        let saved: NetworkView | null = null;
        const ok = await form.submit(async (v) => {
          const body: NetworkBody = {
            public_host: orNull(v.public_host),
            public_ip: orNull(v.public_ip),
            tls_mode: v.tls_mode === '' ? null : v.tls_mode,
            acme_email: orNull(v.acme_email),
          };
          saved = (await api<NetworkResponse>('PUT', '/settings/network', body)).network;
        });
        if (ok && saved) {
          // the warning on the dashboard and with peer configs comes from the app settings
          get<AppSettingsResponse>('/settings/app')
            .then((r) => appInfo.set(r.app))
            .catch(() => undefined);
          props.onSaved(saved);
        }
      }}
    >
      <FormErrors form={form} shown={['public_host', 'public_ip', 'tls_mode', 'acme_email']} />
      <div class="form-grid">
        <TextField
          form={form}
          name="public_host"
          label={t('network.publicHost')}
          hint={t('network.publicHostHint', { fallback: hostFallback })}
          placeholder={n.public_host.env ?? n.hostname}
          autoComplete="off"
        />
        <TextField
          form={form}
          name="public_ip"
          label={t('network.publicIp')}
          hint={t('network.publicIpHint', { fallback: ipFallback })}
          placeholder={n.public_ip.env ?? ''}
          inputMode="decimal"
          autoComplete="off"
        />
        <SelectField
          form={form}
          name="tls_mode"
          label={t('network.tlsMode')}
          hint={t('network.tlsHint')}
          empty={t('network.tlsEnv', { value: n.tls_mode.env })}
          options={[
            { value: 'acme', label: t('network.tlsAcme') },
            { value: 'internal', label: t('network.tlsInternal') },
          ]}
        />
        <TextField
          form={form}
          name="acme_email"
          type="email"
          label={t('network.acmeEmail')}
          hint={t('network.acmeEmailHint', { fallback: mailFallback })}
          placeholder={n.acme_email.env ?? ''}
          autoComplete="email"
        />
      </div>
      <div class="form-actions">
        {props.children}
        <SubmitButton form={form} label={t('network.save')} />
      </div>
    </form>
  );
}
