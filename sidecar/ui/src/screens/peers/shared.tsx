// Pieces the peers list, its dialogs and the detail page share: the Peer JSON, its status line,
// the config + QR panel, the create/edit form.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api } from '../../api';
import { Badge, CopyButton, ErrorBanner, Spinner, StatusDot } from '../../components/ui';
import { PublicHostWarning } from '../../components/public-host';
import { CheckField, FormErrors, NumberField, SelectField, SubmitButton, TextArea, TextField, useForm } from '../../components/form';
import { useApi } from '../../hooks';
import { fmtAgo, t, useLang } from '../../i18n';
import type { CreatePeerBody, Peer, PeerCreatedResponse, PeerQrResponse, PeerResponse } from '../../protocol';
import type { Group, Tag } from '../../protocol';
import { appInfo } from '../../session';
import { SpeedLimitFields, speedLimitBody, speedLimitText, speedLimitValues, type SpeedLimitValue } from '../shaping/speed-limit';
import { QuotaFields, peerQuotaHint, quotaBody, quotaValues, type QuotaValue } from '../quotas/quota';
import { useStore } from '../../store';
import { ScheduleSection, scheduleBody, scheduleValues, type ScheduleValues } from '../schedule/ScheduleSection';

export type { Group, Peer, Tag } from '../../protocol';

export const PEER_EVENTS = [
  'peer_created',
  'peer_updated',
  'peer_deleted',
  'peer_enabled',
  'peer_disabled',
  'peer_expired',
  'peer_online',
  'peer_offline',
  'peer_access_closed',
  'peer_access_opened',
];
export const GROUP_EVENTS = ['peer_group_created', 'peer_group_updated', 'peer_group_deleted'];
export const TAG_EVENTS = ['tag_created', 'tag_deleted', 'peer_created', 'peer_updated', 'peer_deleted'];

export const splitTags = (s: string | null | undefined) =>
  (s ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/** Re-renders every `ms` so ages ("2 minutes ago") stay true without a reload. */
export function useNow(ms = 10_000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const h = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(h);
  }, [ms]);
  return now;
}

/** "new config needed": the config handed out last carries an endpoint this server no longer has (peers/view.ts config_outdated). */
export function ConfigOutdatedBadge(props: { peer: Peer }) {
  if (!props.peer.config_outdated) return null;
  return (
    <span title={t('peers.configOutdatedTitle')} data-testid="config-outdated">
      <Badge tone="warn">{t('peers.configOutdated')}</Badge>
    </span>
  );
}

export function PeerStatus(props: { peer: Peer; now: number }) {
  const p = props.peer;
  const age = p.latestHandshake ? t('peers.handshakeAgo', { ago: fmtAgo(p.latestHandshake, props.now) }) : t('peers.neverConnected');
  if (!p.enabled) return <StatusDot state="off" label={t('peers.disabledState')} />;
  if (p.expired) return <StatusDot state="warn" label={t('peers.expiredState')} />;
  return (
    <span class="peer-status">
      <StatusDot state={p.isOnline ? 'up' : 'down'} label={p.isOnline ? t('peers.online') : t('peers.offline')} />
      <span class="muted small">{age}</span>
    </span>
  );
}

/** The client config as text (copy, download) and as a QR code, fetched on demand. */
export function PeerConfig(props: { id: number; name: string; onLoaded?: () => void }) {
  useLang();
  const { data, error, loading } = useApi<PeerQrResponse>(`/peers/${props.id}/qr`);
  // handing the config out clears the peer's config_outdated: the caller reloads the peer
  useEffect(() => {
    if (data) props.onLoaded?.();
  }, [data]);
  if (loading && !data) return <Spinner />;
  if (error) return <ErrorBanner error={error} />;
  if (!data) return null;
  return (
    <>
      <PublicHostWarning />
      <div class="peer-config">
        <figure>
          <img class="qr" src={data.qr} alt={t('peers.qrAlt', { name: props.name })} width={280} height={280} />
        </figure>
        <div class="peer-config-text">
          <p class="hint">{t('peers.configHint')}</p>
          <pre aria-label={t('peers.config')} tabIndex={0}>
            {data.config}
          </pre>
          <div class="form-actions start">
            <CopyButton text={data.config} />
            <a class="btn small" href={`/api/v1/peers/${props.id}/config?download=1`} download>
              {t('peers.downloadConfig')}
            </a>
          </div>
        </div>
      </div>
    </>
  );
}

function toLocalInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The form's state (UI only): what its inputs hold while they are edited. */
interface FormValues extends ScheduleValues {
  name: string;
  description: string;
  group_id: number | null;
  tags: string;
  expires_at: string;
  dns: string;
  persistent_keepalive: number | null;
  is_gateway: boolean;
  hostname: string;
  /** the client-traffic preset (UI only): what client_allowed_ips is sent as */
  client_tunnel: ClientTunnel;
  /** the Custom preset's CIDRs, comma- or line-separated (sent as the list client_allowed_ips) */
  client_allowed_ips: string;
  speed_limit: SpeedLimitValue;
  quota: QuotaValue;
}

/** The client-traffic presets of the peer form: split = the server default (null), full = everything, custom = a list. */
export type ClientTunnel = 'split' | 'full' | 'custom';
export const FULL_TUNNEL = ['0.0.0.0/0', '::/0'];

/** Which preset a peer's client_allowed_ips is. */
export function clientTunnelOf(list: string[] | null | undefined): ClientTunnel {
  if (!list) return 'split';
  if (list.length === FULL_TUNNEL.length && FULL_TUNNEL.every((c) => list.includes(c))) return 'full';
  return 'custom';
}

/** The peer's client traffic in words, for the detail page and the list. */
export function ClientTunnelText(props: { peer: Peer; subnet?: string }) {
  const list = props.peer.client_allowed_ips;
  const kind = clientTunnelOf(list);
  return (
    <span data-testid="client-tunnel">
      {t(`peers.tunnel_${kind}`)}
      {kind !== 'full' && (
        <>
          {' '}
          <code>{(list ?? (props.subnet ? [props.subnet] : [])).join(', ')}</code>
        </>
      )}
    </span>
  );
}

/** The client-traffic choice: radio presets, and the CIDR list under Custom. */
function ClientTunnelField(props: { form: ReturnType<typeof useForm<FormValues>>; subnet?: string }) {
  const { form } = props;
  const kind = form.values.client_tunnel;
  const pick = (k: ClientTunnel) => {
    form.set('client_tunnel', k);
    if (k === 'custom' && !form.values.client_allowed_ips.trim() && props.subnet) form.set('client_allowed_ips', props.subnet);
  };
  return (
    <fieldset class="peer-tunnel" data-testid="client-tunnel-field">
      <legend>{t('peers.clientTraffic')}</legend>
      {(['split', 'full', 'custom'] as const).map((k) => (
        <label key={k} class="check">
          <input type="radio" name="client_tunnel" value={k} checked={kind === k} onChange={() => pick(k)} />
          <span>
            {t(`peers.tunnel_${k}`)}
            <span class="hint block">{t(`peers.tunnelHint_${k}`, { subnet: props.subnet ?? '' })}</span>
          </span>
        </label>
      ))}
      {kind === 'custom' ? (
        <TextArea form={form} name="client_allowed_ips" label={t('peers.clientAllowedIps')} hint={t('peers.clientAllowedIpsHint')} rows={2} />
      ) : (
        // a refusal of the list still shows at its field when another preset is chosen
        form.errors.client_allowed_ips && (
          <p class="field-error" role="alert" id="f-client_allowed_ips">
            {form.errors.client_allowed_ips}
          </p>
        )
      )}
    </fieldset>
  );
}

/** The peer form's hint: empty fields mean the group's default (named when the chosen group has one). */
function speedLimitHint(group: Group | undefined): string {
  return t('shaping.peerHint', { group: group?.speed_limit ? t('shaping.groupHintText', { value: speedLimitText(group.speed_limit) }) : '' });
}

/** Tags as comma-separated text, with the registry's names as one-click suggestions. */
function TagsInput(props: { form: ReturnType<typeof useForm<FormValues>>; suggestions: Tag[] }) {
  const { form } = props;
  const current = splitTags(form.values.tags);
  const have = new Set(current.map((x) => x.toLowerCase()));
  const offer = props.suggestions.filter((s) => !have.has(s.name.toLowerCase())).slice(0, 12);
  return (
    <div>
      <TextField form={form} name="tags" label={t('peers.tags')} hint={t('peers.tagsHint')} autoComplete="off" />
      {offer.length > 0 && (
        <div class="tag-suggest" role="group" aria-label={t('peers.suggestions')}>
          <span class="muted small">{t('peers.suggestions')}:</span>
          {offer.map((s) => (
            <button
              key={s.name}
              type="button"
              class="btn small chip"
              aria-label={t('peers.addTag', { name: s.name })}
              onClick={() => form.set('tags', [...current, s.name].join(', '))}
            >
              + {s.name}
            </button>
          ))}
        </div>
      )}
    </div>
  );
}

/**
 * Create (peer undefined) or edit form. Field names are the API's, so `fields` errors from the
 * server land next to their inputs; what was typed stays when the server refuses.
 */
export function PeerForm(props: {
  peer?: Peer;
  groups: Group[];
  tags: Tag[];
  onDone: (peer: Peer, extra?: { gateway?: { envContent: string } }) => void;
  onCancel: () => void;
}) {
  useLang();
  const p = props.peer;
  const app = useStore(appInfo);
  const subnet = app?.wireguard.subnet;
  const form = useForm<FormValues>({
    name: p?.name ?? '',
    description: p?.description ?? '',
    group_id: p?.group_id ?? null,
    tags: splitTags(p?.tags).join(', '),
    expires_at: toLocalInput(p?.expires_at ?? null),
    dns: p?.dns ?? '',
    persistent_keepalive: p?.persistent_keepalive ?? null,
    is_gateway: p?.is_gateway ?? false,
    hostname: p?.hostname ?? '',
    client_tunnel: clientTunnelOf(p?.client_allowed_ips),
    client_allowed_ips: (p?.client_allowed_ips ?? []).join(', '),
    speed_limit: speedLimitValues(p?.speed_limit),
    quota: quotaValues(p?.quota),
    ...scheduleValues(p),
  });
  const groupOptions = useMemo(() => props.groups.map((g) => ({ value: g.id, label: g.name })), [props.groups]);
  const onSubmit = (e: Event) => {
    e.preventDefault();
    let extra: { gateway?: { envContent: string } } | undefined;
    let saved: Peer | undefined;
    void form
      .submit(async (v) => {
        const body: CreatePeerBody = {
          name: v.name,
          description: v.description.trim() ? v.description : null,
          group_id: v.group_id,
          tags: v.tags,
          expires_at: v.expires_at ? new Date(v.expires_at).toISOString() : null,
          dns: v.dns.trim() ? v.dns : null,
          persistent_keepalive: v.persistent_keepalive,
          speed_limit: speedLimitBody(v.speed_limit),
          quota: quotaBody(v.quota),
          access_schedule: scheduleBody(v),
        };
        const gateway = p ? p.is_gateway : v.is_gateway;
        if (!gateway)
          body.client_allowed_ips =
            v.client_tunnel === 'full'
              ? FULL_TUNNEL
              : v.client_tunnel === 'custom'
                ? v.client_allowed_ips
                    .split(/[\s,]+/)
                    .map((x) => x.trim())
                    .filter(Boolean)
                : null;
        if (p) {
          saved = (await api<PeerResponse>('PUT', `/peers/${p.id}`, body)).peer;
          if ((v.hostname.trim() || null) !== (p.hostname ?? null)) {
            saved = (await api<PeerResponse>('PATCH', `/peers/${p.id}/hostname`, { hostname: v.hostname.trim() || null })).peer;
          }
        } else {
          const r = await api<PeerCreatedResponse>('POST', '/peers', { ...body, is_gateway: v.is_gateway });
          saved = r.peer;
          extra = r.gateway ? { gateway: r.gateway } : undefined;
        }
      })
      .then((ok) => {
        if (ok && saved) props.onDone(saved, extra);
      });
  };
  return (
    <form onSubmit={onSubmit} noValidate>
      <FormErrors form={form} />
      <div class="form-grid">
        <TextField form={form} name="name" label={t('peers.name')} required autoComplete="off" />
        <SelectField form={form} name="group_id" label={t('peers.group')} options={groupOptions} empty={t('peers.noGroup')} numeric />
      </div>
      <TextArea form={form} name="description" label={t('peers.description')} rows={2} />
      <TagsInput form={form} suggestions={props.tags} />
      <div class="form-grid">
        <TextField form={form} name="expires_at" type="datetime-local" label={t('peers.expires')} hint={t('peers.expiresHint')} />
        <NumberField form={form} name="persistent_keepalive" label={t('peers.keepalive')} min={0} max={65535} />
      </div>
      <TextField form={form} name="dns" label={t('peers.dns')} hint={t('peers.dnsHint')} autoComplete="off" />
      {p ? (
        <TextField form={form} name="hostname" label={t('peers.hostname')} hint={t('peers.hostnameHint')} autoComplete="off" />
      ) : (
        <CheckField form={form} name="is_gateway" label={t('peers.isGateway')} />
      )}
      {!(p ? p.is_gateway : form.values.is_gateway) && <ClientTunnelField form={form} subnet={subnet} />}
      <SpeedLimitFields form={form} hint={speedLimitHint(props.groups.find((g) => g.id === form.values.group_id))} />
      <QuotaFields form={form} hint={peerQuotaHint(props.groups.find((g) => g.id === form.values.group_id)?.quota)} />
      <ScheduleSection form={form} />
      <div class="form-actions">
        <button type="button" class="btn" onClick={props.onCancel}>
          {t('common.cancel')}
        </button>
        <SubmitButton form={form} label={p ? t('common.save') : t('common.create')} />
      </div>
    </form>
  );
}
