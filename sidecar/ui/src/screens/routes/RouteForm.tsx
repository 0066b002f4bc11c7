// Create (/routes/new) and edit (/routes/:id/edit) a route. Only the fields that apply are shown:
// HTTP or L4 (protocol, listen port, TLS mode), peer or gateway target, and for HTTP routes HTTPS
// and the HTTP-only protections. Every input is named by the API body field (dotted for nesting) so
// the server's `fields` errors appear next to it; a refused save (400, 409, or the proxy refusing
// the configuration: 502 with Caddy's reason) is shown above the buttons and nothing typed is lost.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api';
import { toast } from '../../components/dialog';
import {
  CheckField,
  FormErrors,
  NumberField,
  SelectField,
  SubmitButton,
  TextArea,
  TextField,
  fid,
  useForm,
  type FieldForm,
  type Form,
} from '../../components/form';
import { ErrorBanner, Link, PageHeader, Spinner } from '../../components/ui';
import { useApi, useTitle } from '../../hooks';
import { t } from '../../i18n';
import { navigate } from '../../router';
import { BreakerPanel } from './breaker';
import { ExposureSection, exposureBody, exposureValues, type ExposureValues } from '../exposure/ExposureSection';
import { usePeers } from './RouteList';
import type { CertificatesResponse, CreateRouteBody, RouteResponse } from '../../protocol';
import type { MirrorTarget, Route, WizardPeer } from './model';
import { GeoSection, geoBody, geoValues, type GeoValues } from '../geo/GeoSection';
import { ScheduleSection, scheduleBody, scheduleValues, type ScheduleValues } from '../schedule/ScheduleSection';
import { BackendsSection, HeadersSection } from '../backends/BackendsSection';
import { trafficBody, trafficValues, type TrafficValues } from '../backends/values';

/** The form's state (UI only): the route's API fields, list fields as editable text (one entry per line); toBody makes the request of it. */
export interface RouteValues extends ExposureValues, GeoValues, ScheduleValues, TrafficValues {
  domain: string;
  description: string;
  route_type: Route['route_type'];
  target_kind: Route['target_kind'];
  enabled: boolean;
  peer_id: number | null;
  target_port: number | null;
  target_peer_id: number | null;
  target_lan_host: string;
  target_lan_port: number | null;
  wol_enabled: boolean;
  wol_mac: string;
  l4_protocol: NonNullable<Route['l4_protocol']>;
  l4_listen_port: number | null;
  l4_tls_mode: NonNullable<Route['l4_tls_mode']>;
  https_enabled: boolean;
  certificate_id: number | null;
  backend_https: boolean;
  compress_enabled: boolean;
  basic_auth_user: string;
  basic_auth_password: string;
  acl_enabled: boolean;
  acl_peer_ids: number[];
  ip_filter_enabled: boolean;
  ip_filter_mode: NonNullable<Route['ip_filter_mode']>;
  ip_filter_rules: string;
  rate_limit_enabled: boolean;
  rate_limit_requests: number | null;
  rate_limit_window: string;
  retry_enabled: boolean;
  retry_count: number | null;
  retry_status_codes: string;
  circuit_breaker_enabled: boolean;
  circuit_breaker_threshold: number | null;
  circuit_breaker_timeout: number | null;
  mirror_enabled: boolean;
  mirror_targets: string;
  bot_blocker_enabled: boolean;
  bot_blocker_mode: NonNullable<Route['bot_blocker_mode']>;
  bot_blocker_config: {
    categories: NonNullable<NonNullable<CreateRouteBody['bot_blocker_config']>['categories']>;
    custom_user_agents: string;
    allow_user_agents: string;
    custom_paths: string;
    allow_paths: string;
    block_empty_user_agent: boolean;
    block_exploit_paths: boolean;
    block_wordpress_paths: boolean;
    tarpit_delay: string;
  };
  monitoring_enabled: boolean;
  debug_enabled: boolean;
}

const lines = (s: string) =>
  s
    .split('\n')
    .map((x) => x.trim())
    .filter(Boolean);
const mirrorText = (m: MirrorTarget) => ('url' in m ? m.url : `peer:${m.peer_id}:${m.port}`);

export function toValues(r: Route | null): RouteValues {
  const bc = r?.bot_blocker_config ?? {};
  return {
    ...exposureValues(r),
    ...geoValues(r),
    ...scheduleValues(r),
    ...trafficValues(r),
    domain: r?.domain ?? '',
    description: r?.description ?? '',
    route_type: r?.route_type ?? 'http',
    target_kind: r?.target_kind ?? 'peer',
    enabled: r?.enabled ?? true,
    peer_id: r?.peer_id ?? null,
    target_port: r?.target_port ? Number(r.target_port) : null,
    target_peer_id: r?.target_peer_id ?? null,
    target_lan_host: r?.target_lan_host ?? '',
    target_lan_port: r?.target_lan_port ?? null,
    wol_enabled: r?.wol_enabled ?? false,
    wol_mac: r?.wol_mac ?? '',
    l4_protocol: r?.l4_protocol ?? 'tcp',
    l4_listen_port: r?.l4_listen_port ?? null,
    l4_tls_mode: r?.l4_tls_mode ?? 'none',
    https_enabled: r ? r.https_enabled : true,
    certificate_id: r?.certificate_id ?? null,
    backend_https: r?.backend_https ?? false,
    compress_enabled: r?.compress_enabled ?? false,
    basic_auth_user: r?.basic_auth_user ?? '',
    basic_auth_password: '',
    acl_enabled: r?.acl_enabled ?? false,
    acl_peer_ids: r?.acl_peer_ids ?? [],
    ip_filter_enabled: r?.ip_filter_enabled ?? false,
    ip_filter_mode: r?.ip_filter_mode ?? 'whitelist',
    ip_filter_rules: (r?.ip_filter_rules ?? []).join('\n'),
    rate_limit_enabled: r?.rate_limit_enabled ?? false,
    rate_limit_requests: r?.rate_limit_requests ?? 100,
    rate_limit_window: r?.rate_limit_window ?? '1m',
    retry_enabled: r?.retry_enabled ?? false,
    retry_count: r?.retry_count ?? 3,
    retry_status_codes: r?.retry_status_codes ?? '502,503,504',
    circuit_breaker_enabled: r?.circuit_breaker_enabled ?? false,
    circuit_breaker_threshold: r?.circuit_breaker_threshold ?? 5,
    circuit_breaker_timeout: r?.circuit_breaker_timeout ?? 30,
    mirror_enabled: r?.mirror_enabled ?? false,
    mirror_targets: (r?.mirror_targets ?? []).map(mirrorText).join('\n'),
    bot_blocker_enabled: r?.bot_blocker_enabled ?? false,
    bot_blocker_mode: r?.bot_blocker_mode ?? 'block',
    bot_blocker_config: {
      categories: bc.categories ?? [],
      custom_user_agents: (bc.custom_user_agents ?? []).join('\n'),
      allow_user_agents: (bc.allow_user_agents ?? []).join('\n'),
      custom_paths: (bc.custom_paths ?? []).join('\n'),
      allow_paths: (bc.allow_paths ?? []).join('\n'),
      block_empty_user_agent: bc.block_empty_user_agent ?? false,
      block_exploit_paths: bc.block_exploit_paths ?? false,
      block_wordpress_paths: bc.block_wordpress_paths ?? false,
      tarpit_delay: bc.tarpit_delay ?? '',
    },
    monitoring_enabled: r?.monitoring_enabled ?? false,
    debug_enabled: r?.debug_enabled ?? false,
  };
}

/**
 * The request body: every field that applies to the chosen type and target, and the fields of the
 * other type/target cleared (so a switched route does not keep settings the server refuses).
 */
/** An L4 route without TLS matches on its port alone: its domain may stay empty. */
export const domainOptional = (v: Pick<RouteValues, 'route_type' | 'l4_protocol' | 'l4_tls_mode'>) =>
  v.route_type === 'l4' && (v.l4_protocol === 'udp' || v.l4_tls_mode === 'none');

export function toBody(v: RouteValues, existing: Route | null): CreateRouteBody {
  const http = v.route_type === 'http';
  const peer = v.target_kind === 'peer';
  const b: CreateRouteBody = {
    // An L4 route without TLS needs no domain (left out when empty).
    ...(v.domain.trim() || !domainOptional(v) ? { domain: v.domain } : {}),
    description: v.description.trim() || null,
    route_type: v.route_type,
    target_kind: v.target_kind,
    peer_id: peer ? v.peer_id : null,
    target_port: peer ? v.target_port : null,
    target_peer_id: peer ? null : v.target_peer_id,
    target_lan_host: peer ? null : v.target_lan_host.trim() || null,
    target_lan_port: peer ? null : v.target_lan_port,
    wol_enabled: peer ? false : v.wol_enabled,
    wol_mac: peer || !v.wol_mac.trim() ? null : v.wol_mac.trim(),
    l4_protocol: http ? null : v.l4_protocol,
    l4_listen_port: http ? null : v.l4_listen_port,
    l4_tls_mode: http ? null : v.l4_protocol === 'udp' ? 'none' : v.l4_tls_mode,
    monitoring_enabled: v.monitoring_enabled && (http || v.l4_protocol === 'tcp'),
    acl_enabled: v.acl_enabled,
    acl_peer_ids: v.acl_enabled || v.acl_peer_ids.length ? v.acl_peer_ids : null,
    ip_filter_enabled: v.ip_filter_enabled,
    ip_filter_mode: v.ip_filter_mode,
    ip_filter_rules: lines(v.ip_filter_rules),
    https_enabled: http && v.https_enabled,
    certificate_id: http && v.https_enabled ? v.certificate_id : null,
    backend_https: http && v.backend_https,
    compress_enabled: http && v.compress_enabled,
    debug_enabled: http && v.debug_enabled,
    rate_limit_enabled: http && v.rate_limit_enabled,
    retry_enabled: http && v.retry_enabled,
    circuit_breaker_enabled: http && v.circuit_breaker_enabled,
    mirror_enabled: http && v.mirror_enabled,
    bot_blocker_enabled: http && v.bot_blocker_enabled,
    ...exposureBody(v, http),
    geo_filter: geoBody(v),
    access_schedule: scheduleBody(v),
    ...trafficBody(v, http),
  };
  if (!existing) b.enabled = v.enabled;
  if (http) {
    Object.assign(b, {
      rate_limit_requests: v.rate_limit_requests,
      rate_limit_window: v.rate_limit_window.trim() || null,
      retry_count: v.retry_count,
      retry_status_codes: v.retry_status_codes.trim() || null,
      circuit_breaker_threshold: v.circuit_breaker_threshold,
      circuit_breaker_timeout: v.circuit_breaker_timeout,
      mirror_targets: lines(v.mirror_targets).map((l) => {
        const m = /^peer:(\d+):(\d+)$/.exec(l);
        return m ? { peer_id: Number(m[1]), port: Number(m[2]) } : l;
      }),
      bot_blocker_mode: v.bot_blocker_mode,
    });
    const c = v.bot_blocker_config;
    if (v.bot_blocker_enabled || existing?.bot_blocker_config) {
      const cfg: NonNullable<CreateRouteBody['bot_blocker_config']> = {};
      if (c.categories.length) cfg.categories = c.categories;
      for (const k of ['custom_user_agents', 'allow_user_agents', 'custom_paths', 'allow_paths'] as const) if (lines(c[k]).length) cfg[k] = lines(c[k]);
      for (const k of ['block_empty_user_agent', 'block_exploit_paths', 'block_wordpress_paths'] as const) if (c[k]) cfg[k] = true;
      if (c.tarpit_delay.trim()) cfg.tarpit_delay = c.tarpit_delay.trim();
      b.bot_blocker_config = Object.keys(cfg).length ? cfg : null;
    }
    const user = v.basic_auth_user.trim();
    if (user) {
      b.basic_auth_user = user;
      if (v.basic_auth_password) b.basic_auth_password = v.basic_auth_password;
    } else if (!existing || existing.basic_auth_user !== null) {
      b.basic_auth_user = null;
    }
  } else if (existing?.basic_auth_user) {
    b.basic_auth_user = null;
  }
  return b;
}

/** A fieldset whose settings show once its switch is on (the switch is the API's *_enabled field). */
function Section(props: {
  form: Form<RouteValues>;
  legend: string;
  toggle?: keyof RouteValues & string;
  toggleLabel?: string;
  children: ComponentChildren;
  hint?: string;
}) {
  const on = props.toggle ? !!props.form.values[props.toggle] : true;
  return (
    <fieldset class="route-section">
      <legend>{props.legend}</legend>
      {props.hint && <p class="hint">{props.hint}</p>}
      {props.toggle && <CheckField form={props.form} name={props.toggle} label={props.toggleLabel ?? t('routes.on')} />}
      {on && <div class="form-grid">{props.children}</div>}
    </fieldset>
  );
}

/** Errors of list entries (`ip_filter_rules.2`), shown under the list's input. */
function EntryErrors(props: { form: FieldForm; name: string }) {
  const list = Object.entries(props.form.errors).filter(([k]) => k.startsWith(`${props.name}.`));
  if (!list.length) return null;
  return (
    <ul class="field-error entry-errors" id={`${fid(props.name)}-entries`}>
      {list.map(([k, msg]) => {
        const i = Number(k.slice(props.name.length + 1).split('.')[0]);
        return <li key={k}>{Number.isInteger(i) ? t('routes.entryError', { n: i + 1, msg }) : `${k}: ${msg}`}</li>;
      })}
    </ul>
  );
}

function ListArea(props: { form: FieldForm; name: string; label: string; hint?: string; rows?: number }) {
  return (
    <div class="field-span">
      <TextArea form={props.form} name={props.name} label={props.label} hint={props.hint} rows={props.rows ?? 3} />
      <EntryErrors form={props.form} name={props.name} />
    </div>
  );
}

function PeerMulti(props: { form: Form<RouteValues>; name: 'acl_peer_ids'; label: string; peers: WizardPeer[] }) {
  const err = props.form.errors[props.name];
  const v = props.form.values[props.name];
  return (
    <div class={`field field-span${err ? ' has-error' : ''}`}>
      <label for={fid(props.name)}>{props.label}</label>
      <select
        id={fid(props.name)}
        name={props.name}
        multiple
        size={Math.min(6, Math.max(3, props.peers.length))}
        aria-invalid={err ? 'true' : undefined}
        aria-describedby={`${fid(props.name)}-hint${err ? ` ${fid(props.name)}-err` : ''}`}
        onChange={(e) =>
          props.form.set(
            props.name,
            [...e.currentTarget.selectedOptions].map((o) => Number(o.value)),
          )
        }
      >
        {props.peers.map((p) => (
          <option key={p.id} value={p.id} selected={v.includes(p.id)}>
            {p.name} ({p.ip})
          </option>
        ))}
      </select>
      <p class="hint" id={`${fid(props.name)}-hint`}>
        {t('routes.aclHint')}
      </p>
      {err && (
        <p class="field-error" id={`${fid(props.name)}-err`}>
          {err}
        </p>
      )}
    </div>
  );
}

export default function RouteForm(props: { id?: number }) {
  const editing = props.id !== undefined;
  useTitle(editing ? t('routes.editTitle') : t('routes.newTitle'));
  const loaded = useApi<RouteResponse>(editing ? `/routes/${props.id}` : null);
  if (editing && !loaded.data) {
    return (
      <>
        <PageHeader title={t('routes.editTitle')} back="/routes" />
        {loaded.error ? <ErrorBanner error={loaded.error} onRetry={loaded.reload} /> : <Spinner />}
      </>
    );
  }
  return <RouteFormBody route={loaded.data?.route ?? null} />;
}

function RouteFormBody(props: { route: Route | null }) {
  const existing = props.route;
  const form = useForm<RouteValues>(toValues(existing));
  const certs = useApi<CertificatesResponse>('/certificates');
  const peers = usePeers();
  const [dns, setDns] = useState<{ matches: boolean; resolvedIps: string[]; expectedIp: string | null; publicHost?: string } | null>(null);
  const v = form.values;
  const http = v.route_type === 'http';
  const gateways = peers.list.filter((p) => p.peer_type === 'gateway');
  const peerOptions = peers.list.map((p) => ({ value: p.id, label: `${p.name} (${p.ip})` }));

  // A new L4 route over UDP has no TLS; keep the select consistent.
  useEffect(() => {
    if (v.l4_protocol === 'udp' && v.l4_tls_mode !== 'none') form.set('l4_tls_mode', 'none');
  }, [v.l4_protocol]);

  const save = async (e: Event) => {
    e.preventDefault();
    let saved: Route | null = null;
    const ok = await form.submit(async (values) => {
      const body = toBody(values, existing);
      const res = existing ? await api<RouteResponse>('PUT', `/routes/${existing.id}`, body) : await api<RouteResponse>('POST', '/routes', body);
      saved = res.route;
    });
    if (ok && saved) {
      toast(t('common.saved'));
      navigate(`/routes/${(saved as Route).id}`);
    }
  };
  const checkDns = async () => {
    try {
      setDns(await api('POST', '/routes/check-dns', { domain: v.domain }));
    } catch (err) {
      setDns(null);
      toast((err as Error).message, 'bad');
    }
  };

  const title = existing ? t('routes.editTitleOf', { domain: existing.domain }) : t('routes.newTitle');
  return (
    <>
      <PageHeader title={title} back={existing ? `/routes/${existing.id}` : '/routes'} />
      <form class="route-form" onSubmit={save} noValidate aria-label={title}>
        <Section form={form} legend={t('routes.secBasics')}>
          <TextField
            form={form}
            name="domain"
            label={t('routes.domain')}
            required={!domainOptional(v)}
            hint={domainOptional(v) ? t('routes.domainOptionalHint') : t('routes.domainHint')}
            autoComplete="off"
          />
          <TextField form={form} name="description" label={t('routes.description')} />
          <SelectField
            form={form}
            name="route_type"
            label={t('routes.type')}
            options={[
              { value: 'http', label: t('routes.typeHttp') },
              { value: 'l4', label: t('routes.typeL4') },
            ]}
          />
          {!existing && <CheckField form={form} name="enabled" label={t('routes.enabledOnCreate')} />}
          <div class="field-span dns-inline">
            <button type="button" class="btn small" onClick={checkDns} disabled={!v.domain.trim()}>
              {t('routes.checkDns')}
            </button>
            {dns && <DnsResult dns={dns} />}
          </div>
        </Section>

        {!http && (
          <Section form={form} legend={t('routes.secL4')}>
            <SelectField
              form={form}
              name="l4_protocol"
              label={t('routes.l4Protocol')}
              options={[
                { value: 'tcp', label: 'TCP' },
                { value: 'udp', label: 'UDP' },
              ]}
            />
            <NumberField form={form} name="l4_listen_port" label={t('routes.l4ListenPort')} min={1} max={65535} required />
            {v.l4_protocol === 'tcp' && (
              <SelectField
                form={form}
                name="l4_tls_mode"
                label={t('routes.l4TlsMode')}
                hint={t('routes.l4TlsHint')}
                options={[
                  { value: 'none', label: t('routes.tlsNone') },
                  { value: 'passthrough', label: t('routes.tlsPassthrough') },
                  { value: 'terminate', label: t('routes.tlsTerminate') },
                ]}
              />
            )}
          </Section>
        )}

        <Section form={form} legend={t('routes.secTarget')}>
          <SelectField
            form={form}
            name="target_kind"
            label={t('routes.targetKind')}
            options={[
              { value: 'peer', label: t('routes.targetPeer') },
              { value: 'gateway', label: t('routes.targetGateway') },
            ]}
          />
          {v.target_kind === 'peer' ? (
            <>
              <SelectField form={form} name="peer_id" label={t('routes.peer')} numeric empty={t('routes.choosePeer')} options={peerOptions} required />
              <NumberField form={form} name="target_port" label={t('routes.targetPort')} min={1} max={65535} required />
            </>
          ) : (
            <>
              <SelectField
                form={form}
                name="target_peer_id"
                label={t('routes.gatewayPeer')}
                numeric
                empty={t('routes.chooseGateway')}
                options={gateways.map((p) => ({ value: p.id, label: `${p.name} (${p.ip})` }))}
                required
              />
              <TextField form={form} name="target_lan_host" label={t('routes.lanHost')} required />
              <NumberField form={form} name="target_lan_port" label={t('routes.lanPort')} min={1} max={65535} required />
              <CheckField form={form} name="wol_enabled" label={t('routes.wol')} />
              {v.wol_enabled && <TextField form={form} name="wol_mac" label={t('routes.wolMac')} placeholder={t('routes.wolMacPlaceholder')} />}
            </>
          )}
          {http && <CheckField form={form} name="backend_https" label={t('routes.backendHttps')} />}
        </Section>
        {http && <BackendsSection form={form} peers={peers.list} />}

        {http && (
          <Section form={form} legend={t('routes.secHttps')}>
            <CheckField form={form} name="https_enabled" label={t('routes.https')} />
            {form.values.https_enabled && (
              <SelectField
                form={form}
                name="certificate_id"
                label={t('routes.certificateChoice')}
                hint={t('routes.certificateChoiceHint')}
                empty={t('routes.certificateAutomatic')}
                numeric
                options={(certs.data?.certificates ?? []).map((c) => ({ value: c.id, label: `${c.name} (${c.subject_names.join(', ')})` }))}
              />
            )}
          </Section>
        )}

        {http && <HeadersSection form={form} />}

        <h2 class="route-group">{t('routes.protection')}</h2>
        {http && <ExposureSection form={form} values={v} />}
        {http && (
          <Section form={form} legend={t('routes.secBasicAuth')} hint={t('routes.basicAuthHint')}>
            <TextField form={form} name="basic_auth_user" label={t('routes.basicUser')} autoComplete="off" />
            {v.basic_auth_user.trim() && (
              <TextField
                form={form}
                name="basic_auth_password"
                type="password"
                label={t('routes.basicPassword')}
                autoComplete="new-password"
                hint={existing?.basic_auth_password_set ? t('routes.basicPasswordKeep') : undefined}
              />
            )}
          </Section>
        )}
        <Section form={form} legend={t('routes.secAcl')} toggle="acl_enabled" toggleLabel={t('routes.aclOn')}>
          <PeerMulti form={form} name="acl_peer_ids" label={t('routes.aclPeers')} peers={peers.list} />
        </Section>
        <Section form={form} legend={t('routes.secIpFilter')} toggle="ip_filter_enabled" toggleLabel={t('routes.ipFilterOn')}>
          <SelectField
            form={form}
            name="ip_filter_mode"
            label={t('routes.ipFilterMode')}
            options={[
              { value: 'whitelist', label: t('routes.whitelist') },
              { value: 'blacklist', label: t('routes.blacklist') },
            ]}
          />
          <ListArea form={form} name="ip_filter_rules" label={t('routes.ipFilterRules')} hint={t('routes.ipFilterRulesHint')} />
        </Section>
        <GeoSection form={form} />
        <ScheduleSection form={form} />
        {http && (
          <>
            <Section form={form} legend={t('routes.secRateLimit')} toggle="rate_limit_enabled" toggleLabel={t('routes.rateLimitOn')}>
              <NumberField form={form} name="rate_limit_requests" label={t('routes.rateRequests')} min={1} max={1000000} />
              <TextField form={form} name="rate_limit_window" label={t('routes.rateWindow')} hint={t('routes.rateWindowHint')} />
            </Section>
            <Section form={form} legend={t('routes.secBot')} toggle="bot_blocker_enabled" toggleLabel={t('routes.botOn')}>
              <SelectField
                form={form}
                name="bot_blocker_mode"
                label={t('routes.botMode')}
                options={[
                  { value: 'block', label: t('routes.botBlock') },
                  { value: 'log', label: t('routes.botLog') },
                  { value: 'tarpit', label: t('routes.botTarpit') },
                ]}
              />
              {v.bot_blocker_mode === 'tarpit' && (
                <TextField form={form} name="bot_blocker_config.tarpit_delay" label={t('routes.botTarpitDelay')} hint={t('routes.botTarpitHint')} />
              )}
              <fieldset class="field-span checks">
                <legend>{t('routes.botCategories')}</legend>
                {(['scanner', 'ai_crawler', 'scraper'] as const).map((c) => (
                  <label key={c} class="check">
                    <input
                      type="checkbox"
                      name="bot_blocker_config.categories"
                      value={c}
                      checked={v.bot_blocker_config.categories.includes(c)}
                      onChange={(e) =>
                        form.set(
                          'bot_blocker_config.categories',
                          e.currentTarget.checked ? [...v.bot_blocker_config.categories, c] : v.bot_blocker_config.categories.filter((x) => x !== c),
                        )
                      }
                    />
                    {t(`routes.botCat_${c}`)}
                  </label>
                ))}
              </fieldset>
              <CheckField form={form} name="bot_blocker_config.block_empty_user_agent" label={t('routes.botEmptyUa')} />
              <CheckField form={form} name="bot_blocker_config.block_exploit_paths" label={t('routes.botExploit')} />
              <CheckField form={form} name="bot_blocker_config.block_wordpress_paths" label={t('routes.botWordpress')} />
              <ListArea form={form} name="bot_blocker_config.custom_user_agents" label={t('routes.botCustomUa')} hint={t('routes.botPatternHint')} />
              <ListArea form={form} name="bot_blocker_config.allow_user_agents" label={t('routes.botAllowUa')} hint={t('routes.botPatternHint')} />
              <ListArea form={form} name="bot_blocker_config.custom_paths" label={t('routes.botCustomPaths')} hint={t('routes.botPatternHint')} />
              <ListArea form={form} name="bot_blocker_config.allow_paths" label={t('routes.botAllowPaths')} hint={t('routes.botAllowPathsHint')} />
            </Section>
          </>
        )}
        {existing && http && (
          <p class="route-auth-link">
            <Link href={`/routes/${existing.id}/auth`}>{t('routes.routeAuthLink')}</Link>
          </p>
        )}

        <h2 class="route-group">{t('routes.resilience')}</h2>
        {http && (
          <>
            <Section form={form} legend={t('routes.secRetry')} toggle="retry_enabled" toggleLabel={t('routes.retryOn')}>
              <NumberField form={form} name="retry_count" label={t('routes.retryCount')} min={1} max={10} />
              <TextField form={form} name="retry_status_codes" label={t('routes.retryCodes')} hint={t('routes.retryCodesHint')} />
            </Section>
            <Section form={form} legend={t('routes.secBreaker')} toggle="circuit_breaker_enabled" toggleLabel={t('routes.breakerOn')}>
              <NumberField form={form} name="circuit_breaker_threshold" label={t('routes.breakerThreshold')} min={1} max={1000} />
              <NumberField form={form} name="circuit_breaker_timeout" label={t('routes.breakerTimeout')} min={1} max={86400} />
              {existing?.circuit_breaker_enabled && (
                <div class="field-span">
                  <BreakerPanel routeId={existing.id} />
                </div>
              )}
            </Section>
            <Section form={form} legend={t('routes.secMirror')} toggle="mirror_enabled" toggleLabel={t('routes.mirrorOn')}>
              <ListArea form={form} name="mirror_targets" label={t('routes.mirrorTargets')} hint={t('routes.mirrorHint')} />
            </Section>
          </>
        )}
        <Section form={form} legend={t('routes.secMonitoring')}>
          {http || v.l4_protocol === 'tcp' ? (
            <CheckField form={form} name="monitoring_enabled" label={t('routes.monitoringOn')} />
          ) : (
            <p class="hint">{t('routes.monitoringUdp')}</p>
          )}
          {http && <CheckField form={form} name="debug_enabled" label={t('routes.debugOn')} />}
        </Section>

        <div class="form-footer">
          <FormErrors form={form} />
          <div class="form-actions">
            <Link class="btn" href={existing ? `/routes/${existing.id}` : '/routes'}>
              {t('common.cancel')}
            </Link>
            <SubmitButton form={form} label={existing ? t('common.save') : t('common.create')} />
          </div>
        </div>
      </form>
    </>
  );
}

export function DnsResult(props: { dns: { matches: boolean; resolvedIps: string[]; expectedIp: string | null; publicHost?: string } }) {
  const d = props.dns;
  // "this server" as peers dial it (the Network settings' public host) and the address it should resolve to
  const server = (ip: string) => (d.publicHost && d.publicHost !== d.expectedIp ? `${d.publicHost}, ${ip}` : ip);
  return (
    <p class={`dns-result ${d.matches ? 'ok' : 'bad'}`} role="status">
      {d.matches
        ? t('routes.dnsOk', { ip: server(d.expectedIp ?? '–') })
        : t('routes.dnsBad', { ips: d.resolvedIps.join(', ') || t('routes.dnsNone'), ip: server(d.expectedIp ?? t('common.unknown')) })}
    </p>
  );
}
