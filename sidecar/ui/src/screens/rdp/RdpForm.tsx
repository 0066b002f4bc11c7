// Create (/rdp/new) and edit (/rdp/:id/edit) an RDP route. The access mode decides which target
// fields show: internal (a VPN peer or a host reached through the tunnel), external (a public host and
// port), both (the internal target plus the public address; the desktop client picks by
// reachability), gateway (a gateway peer, the host in its network and the server's public port; the
// linked L4 route is made by the server and linked here). Then the connect-profile settings
// (resolution, colour depth, audio, clipboard, NLA, RD gateway), Wake-on-LAN and the allowed users.
// Input names are the API body's field names, so the server's `fields` errors land next to them;
// credentials and maintenance windows are edited on the route's page (their own endpoints).
import type { ComponentChildren } from 'preact';
import { api } from '../../api';
import { toast } from '../../components/dialog';
import { CheckField, FormErrors, NumberField, SelectField, SubmitButton, TextField, useForm, type Form } from '../../components/form';
import { CheckGroup } from '../../components/checkgroup';
import { ErrorBanner, Link, PageHeader, Spinner } from '../../components/ui';
import { useApi, useTitle } from '../../hooks';
import { t } from '../../i18n';
import { navigate } from '../../router';
import { hasRole } from '../../session';
import { usePeers } from './RdpList';
import type { CreateRdpBody, MayBeEmpty, RdpRouteResponse, UsersResponse } from '../../protocol';
import { ACCESS_MODES, type AccessMode, type RdpRoute } from './model';

/** The form's state: what its inputs hold while they are edited (toBody makes the request of it). */
export interface RdpValues {
  name: string;
  description: string;
  enabled: boolean;
  access_mode: AccessMode;
  target_kind: 'peer' | 'host';
  target_peer_id: number | null;
  target_host: string;
  target_port: number | null;
  external_host: string;
  listen_port: number | null;
  gateway_peer_id: number | null;
  full_screen: boolean;
  resolution: string;
  color_depth: ColorDepth;
  audio_mode: RdpRoute['audio_mode'];
  clipboard_enabled: boolean;
  network_level_auth: boolean;
  gateway_host: string;
  gateway_port: number | null;
  wol_enabled: boolean;
  wol_mac: string;
  all_users: boolean;
  allowed_user_ids: string[];
}

export function toValues(r: RdpRoute | null): RdpValues {
  return {
    name: r?.name ?? '',
    description: r?.description ?? '',
    enabled: r?.enabled ?? true,
    access_mode: r?.access_mode ?? 'internal',
    target_kind: r?.target_peer_id != null ? 'peer' : r ? 'host' : 'peer',
    target_peer_id: r?.target_peer_id ?? null,
    // A peer target's host is derived (its tunnel IP): not shown as typed text.
    target_host: r && r.target_peer_id == null ? (r.target_host ?? '') : '',
    target_port: r?.target_port ?? 3389,
    external_host: r?.external_host ?? '',
    listen_port: r?.listen_port ?? null,
    gateway_peer_id: r?.gateway_peer_id ?? null,
    full_screen: !r?.resolution,
    resolution: r?.resolution ?? '1920x1080',
    color_depth: COLOR_DEPTHS.find((d) => d === r?.color_depth) ?? 32,
    audio_mode: r?.audio_mode ?? 'local',
    clipboard_enabled: r?.clipboard_enabled ?? true,
    network_level_auth: r?.network_level_auth ?? true,
    gateway_host: r?.gateway_host ?? '',
    gateway_port: r?.gateway_port ?? null,
    wol_enabled: r?.wol_enabled ?? false,
    wol_mac: r?.wol_mac ?? '',
    all_users: !r?.allowed_user_ids,
    allowed_user_ids: (r?.allowed_user_ids ?? []).map(String),
  };
}

/** The request body: the fields of the chosen access mode, the other modes' fields cleared. */
type ColorDepth = NonNullable<CreateRdpBody['color_depth']>;
const COLOR_DEPTHS: readonly ColorDepth[] = [32, 24, 16, 15];

type RdpBody = MayBeEmpty<CreateRdpBody, 'target_port'>;

export function toBody(v: RdpValues, existing: RdpRoute | null): RdpBody {
  const mode = v.access_mode;
  const usesPeer = (mode === 'internal' || mode === 'both') && v.target_kind === 'peer';
  const b: RdpBody = {
    name: v.name.trim(),
    description: v.description.trim() || null,
    access_mode: mode,
    target_peer_id: usesPeer ? v.target_peer_id : null,
    target_port: v.target_port,
    external_host: mode === 'both' ? v.external_host.trim() || null : null,
    listen_port: mode === 'internal' ? null : v.listen_port,
    gateway_peer_id: mode === 'gateway' ? v.gateway_peer_id : null,
    resolution: v.full_screen ? null : v.resolution.trim() || null,
    color_depth: v.color_depth,
    audio_mode: v.audio_mode,
    clipboard_enabled: v.clipboard_enabled,
    network_level_auth: v.network_level_auth,
    gateway_host: v.gateway_host.trim() || null,
    gateway_port: v.gateway_host.trim() ? v.gateway_port : null,
    // A magic packet needs the target's LAN: no Wake-on-LAN for a public-only target.
    wol_enabled: mode !== 'external' && v.wol_enabled,
    wol_mac: v.wol_mac.trim() || null,
    allowed_user_ids: v.all_users ? null : v.allowed_user_ids.map(Number),
  };
  // A peer target's host is the peer's tunnel IP (the server fills it in).
  if (!usesPeer) b.target_host = v.target_host.trim();
  if (!existing) b.enabled = v.enabled;
  return b;
}

function Section(props: { legend: string; hint?: string; children: ComponentChildren }) {
  return (
    <fieldset class="rdp-section">
      <legend>{props.legend}</legend>
      {props.hint && <p class="hint">{props.hint}</p>}
      <div class="form-grid">{props.children}</div>
    </fieldset>
  );
}

export default function RdpForm(props: { id?: number }) {
  const editing = props.id !== undefined;
  useTitle(editing ? t('rdp.editTitle') : t('rdp.newTitle'));
  const loaded = useApi<RdpRouteResponse>(editing ? `/rdp/${props.id}` : null);
  if (editing && !loaded.data) {
    return (
      <>
        <PageHeader title={t('rdp.editTitle')} back="/rdp" />
        {loaded.error ? <ErrorBanner error={loaded.error} onRetry={loaded.reload} /> : <Spinner />}
      </>
    );
  }
  return <RdpFormBody route={loaded.data?.route ?? null} />;
}

function TargetFields(props: { form: Form<RdpValues>; existing: RdpRoute | null }) {
  const { form, existing } = props;
  const v = form.values;
  const peers = usePeers();
  const regular = peers.list.filter((p) => p.peer_type !== 'gateway').map((p) => ({ value: p.id, label: `${p.name} (${p.ip})` }));
  const gateways = peers.list.filter((p) => p.peer_type === 'gateway').map((p) => ({ value: p.id, label: `${p.name} (${p.ip})` }));
  const mode = v.access_mode;
  if (mode === 'gateway') {
    return (
      <Section legend={t('rdp.secTarget')} hint={t('rdp.gatewayHint')}>
        <SelectField form={form} name="gateway_peer_id" label={t('rdp.gatewayPeer')} numeric empty={t('rdp.chooseGateway')} options={gateways} required />
        <TextField form={form} name="target_host" label={t('rdp.lanHost')} hint={t('rdp.lanHostHint')} required autoComplete="off" />
        <NumberField form={form} name="target_port" label={t('rdp.targetPort')} min={1} max={65535} required />
        <NumberField form={form} name="listen_port" label={t('rdp.serverPort')} hint={t('rdp.serverPortHint')} min={1} max={65535} required />
        {existing?.access_mode === 'gateway' && (
          <div class="field-span rdp-linked">
            <p>
              {existing.gateway_l4_route_id !== null ? (
                <>
                  {t('rdp.linkedRoute')}{' '}
                  <Link href={`/routes/${existing.gateway_l4_route_id}`}>{t('rdp.linkedRouteId', { id: existing.gateway_l4_route_id })}</Link>
                </>
              ) : (
                t('rdp.linkedRouteNone')
              )}
              {existing.gateway_listen_port !== null && <> · {t('rdp.gatewayListenPort', { port: existing.gateway_listen_port })}</>}
            </p>
          </div>
        )}
      </Section>
    );
  }
  if (mode === 'external') {
    return (
      <Section legend={t('rdp.secTarget')} hint={t('rdp.externalHint')}>
        <TextField form={form} name="target_host" label={t('rdp.publicHost')} hint={t('rdp.publicHostHint')} required autoComplete="off" />
        <NumberField form={form} name="target_port" label={t('rdp.targetPort')} min={1} max={65535} required />
        <NumberField form={form} name="listen_port" label={t('rdp.publicPort')} hint={t('rdp.publicPortHint')} min={1} max={65535} />
      </Section>
    );
  }
  return (
    <Section legend={t('rdp.secTarget')} hint={mode === 'both' ? t('rdp.bothHint') : t('rdp.internalHint')}>
      <SelectField
        form={form}
        name="target_kind"
        label={t('rdp.targetKind')}
        options={[
          { value: 'peer', label: t('rdp.targetKindPeer') },
          { value: 'host', label: t('rdp.targetKindHost') },
        ]}
      />
      {v.target_kind === 'peer' ? (
        <SelectField
          form={form}
          name="target_peer_id"
          also="target_host"
          label={t('rdp.targetPeer')}
          numeric
          empty={t('rdp.choosePeer')}
          options={regular}
          required
        />
      ) : (
        <TextField form={form} name="target_host" label={t('rdp.targetHost')} hint={t('rdp.targetHostHint')} required autoComplete="off" />
      )}
      <NumberField form={form} name="target_port" label={t('rdp.targetPort')} min={1} max={65535} required />
      {mode === 'both' && (
        <>
          <TextField form={form} name="external_host" label={t('rdp.publicHost')} hint={t('rdp.publicHostHint')} required autoComplete="off" />
          <NumberField form={form} name="listen_port" label={t('rdp.publicPort')} hint={t('rdp.publicPortHint')} min={1} max={65535} />
        </>
      )}
    </Section>
  );
}

function RdpFormBody(props: { route: RdpRoute | null }) {
  const existing = props.route;
  const form = useForm<RdpValues>(toValues(existing));
  const v = form.values;
  // The user list is for admins (GET /users); loaded only when the route is limited to some users.
  const users = useApi<UsersResponse>(!v.all_users && hasRole('viewer') ? '/users' : null, ['user_created', 'user_deleted']);

  const save = async (e: Event) => {
    e.preventDefault();
    let saved: RdpRoute | null = null;
    const ok = await form.submit(async (values) => {
      const body = toBody(values, existing);
      const res = existing ? await api<RdpRouteResponse>('PATCH', `/rdp/${existing.id}`, body) : await api<RdpRouteResponse>('POST', '/rdp', body);
      saved = res.route;
    });
    if (ok && saved) {
      toast(t('common.saved'));
      navigate(`/rdp/${(saved as RdpRoute).id}`);
    }
  };

  const title = existing ? t('rdp.editTitleOf', { name: existing.name }) : t('rdp.newTitle');
  return (
    <>
      <PageHeader title={title} back={existing ? `/rdp/${existing.id}` : '/rdp'} />
      <form class="rdp-form" onSubmit={save} noValidate aria-label={title}>
        <Section legend={t('rdp.secBasics')}>
          <TextField form={form} name="name" label={t('rdp.name')} required autoComplete="off" />
          <TextField form={form} name="description" label={t('rdp.description')} />
          <SelectField
            form={form}
            name="access_mode"
            label={t('rdp.accessMode')}
            hint={t(`rdp.modeHint_${v.access_mode}`)}
            options={ACCESS_MODES.map((m) => ({ value: m, label: t(`rdp.mode_${m}`) }))}
          />
          {!existing && <CheckField form={form} name="enabled" label={t('rdp.enabledOnCreate')} />}
        </Section>

        <TargetFields form={form} existing={existing} />
        {existing?.has_credentials && (
          <p class="hint" data-testid="rdp-creds-dest-hint">
            {t('rdp.credsDestHint')}
          </p>
        )}

        <Section legend={t('rdp.secDisplay')} hint={t('rdp.displayHint')}>
          <CheckField form={form} name="full_screen" label={t('rdp.fullScreen')} />
          {!v.full_screen && <TextField form={form} name="resolution" label={t('rdp.resolution')} hint={t('rdp.resolutionHint')} autoComplete="off" />}
          <SelectField
            form={form}
            name="color_depth"
            label={t('rdp.colorDepth')}
            numeric
            options={COLOR_DEPTHS.map((n) => ({ value: n, label: t('rdp.bits', { n }) }))}
          />
          <SelectField
            form={form}
            name="audio_mode"
            label={t('rdp.audioMode')}
            options={(['local', 'remote', 'off'] as const).map((a) => ({ value: a, label: t(`rdp.audio_${a}`) }))}
          />
          <CheckField form={form} name="clipboard_enabled" label={t('rdp.clipboard')} />
          <CheckField form={form} name="network_level_auth" label={t('rdp.nla')} />
          <TextField form={form} name="gateway_host" label={t('rdp.rdGatewayHost')} hint={t('rdp.rdGatewayHint')} autoComplete="off" />
          {v.gateway_host.trim() !== '' && <NumberField form={form} name="gateway_port" label={t('rdp.rdGatewayPort')} min={1} max={65535} />}
        </Section>

        {v.access_mode !== 'external' && (
          <Section legend={t('rdp.secWol')} hint={t('rdp.wolHint')}>
            <CheckField form={form} name="wol_enabled" label={t('rdp.wolEnabled')} />
            {v.wol_enabled && (
              <TextField form={form} name="wol_mac" label={t('rdp.wolMac')} placeholder={t('rdp.wolMacPlaceholder')} required autoComplete="off" />
            )}
          </Section>
        )}

        <Section legend={t('rdp.secUsers')} hint={t('rdp.usersHint')}>
          <CheckField form={form} name="all_users" label={t('rdp.allUsers')} />
          {!v.all_users && (
            <div class="field-span">
              <CheckGroup
                form={form}
                name="allowed_user_ids"
                label={t('rdp.allowedUsers')}
                options={(users.data?.users ?? []).map((u) => ({ value: String(u.id), label: u.username }))}
              />
            </div>
          )}
        </Section>

        <div class="form-footer">
          <FormErrors form={form} />
          <div class="form-actions">
            <Link class="btn" href={existing ? `/rdp/${existing.id}` : '/rdp'}>
              {t('common.cancel')}
            </Link>
            <SubmitButton form={form} label={existing ? t('common.save') : t('common.create')} />
          </div>
        </div>
      </form>
    </>
  );
}
