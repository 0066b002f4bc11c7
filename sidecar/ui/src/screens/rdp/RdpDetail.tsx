// An RDP route's page (/rdp/:id): its facts and live status with "check now", the credentials
// (encrypted in the browser), the maintenance windows, Wake-on-LAN with progress, and the sessions
// with history and export. Actions: edit, toggle, delete. Live: reloads on the route's events.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, get } from '../../api';
import { confirmAction, toast } from '../../components/dialog';
import { Badge, Card, ErrorBanner, Link, PageHeader, Spinner } from '../../components/ui';
import { useApi, useTitle } from '../../hooks';
import { fmtDate, t, word } from '../../i18n';
import { navigate } from '../../router';
import { CredentialsCard } from './credentials';
import { HistoryCard } from './history';
import { MaintenanceCard } from './maintenance';
import type { RdpRouteResponse, RdpStatusResponse, RdpToggleResponse } from '../../protocol';
import { RDP_EVENTS, RDP_STATUS_EVENTS, type RdpRoute, type RdpStatus } from './model';
import { targetText, usePeers } from './RdpList';
import { CredBadge, EnabledBadge, ReachDot } from './status';
import { WolCard } from './wol';

export default function RdpDetail(props: { id: number }) {
  const { data, error, reload } = useApi<RdpRouteResponse>(`/rdp/${props.id}`, [...RDP_EVENTS, 'master_key_rotated']);
  const r = data?.route;
  useTitle(r?.name ?? t('rdp.title'));
  const peers = usePeers();
  const [busy, setBusy] = useState<string | null>(null);

  if (!r) {
    return (
      <>
        <PageHeader title={t('rdp.title')} back="/rdp" />
        {error ? <ErrorBanner error={error} onRetry={reload} /> : <Spinner />}
      </>
    );
  }
  const run = async (key: string, fn: () => Promise<void>) => {
    setBusy(key);
    try {
      await fn();
    } catch (e) {
      toast((e as Error).message, 'bad');
    } finally {
      setBusy(null);
    }
  };
  const toggle = () =>
    run('toggle', async () => {
      const res = await api<RdpToggleResponse>('PUT', `/rdp/${r.id}/toggle`);
      toast(res.route.enabled ? t('rdp.enabledToast', { name: r.name }) : t('rdp.disabledToast', { name: r.name }));
      reload();
    });
  const remove = async () => {
    const msg = r.gateway_l4_route_id !== null ? t('rdp.deleteConfirmGateway', { name: r.name }) : t('common.confirmDelete', { name: r.name });
    if (!(await confirmAction(msg, { confirmLabel: t('common.delete') }))) return;
    await run('delete', async () => {
      await api('DELETE', `/rdp/${r.id}`);
      toast(t('rdp.deletedToast', { name: r.name }));
      navigate('/rdp');
    });
  };

  const display = [
    r.resolution ?? t('rdp.fullScreen'),
    t('rdp.bits', { n: r.color_depth }),
    t(`rdp.audio_${r.audio_mode}`),
    r.clipboard_enabled ? t('rdp.clipboardOn') : t('rdp.clipboardOff'),
    r.network_level_auth ? t('rdp.nlaOn') : t('rdp.nlaOff'),
  ].join(' · ');
  const facts: [string, ComponentChildren][] = [
    [t('rdp.accessMode'), t(`rdp.mode_${r.access_mode}`)],
    [t('rdp.target'), targetText(r, peers.byId)],
    ...(r.access_mode === 'gateway'
      ? [
          [
            t('rdp.linkedRouteTitle'),
            r.gateway_l4_route_id !== null ? (
              <Link href={`/routes/${r.gateway_l4_route_id}`}>{t('rdp.linkedRouteId', { id: r.gateway_l4_route_id })}</Link>
            ) : (
              '–'
            ),
          ] as [string, ComponentChildren],
        ]
      : []),
    [t('rdp.secDisplay'), display],
    ...(r.gateway_host ? [[t('rdp.rdGateway'), `${r.gateway_host}:${r.gateway_port ?? 443}`] as [string, string]] : []),
    [t('rdp.secWol'), r.wol_enabled ? `${t('rdp.on')} (${r.wol_mac ?? '?'})` : t('rdp.off')],
    [t('rdp.secUsers'), r.allowed_user_ids === null ? t('rdp.allUsersShort') : t('rdp.someUsers', { n: r.allowed_user_ids.length })],
    ...(r.description ? [[t('rdp.description'), r.description] as [string, string]] : []),
    [t('rdp.updated'), fmtDate(r.updated_at)],
  ];

  return (
    <>
      <PageHeader title={r.name} back="/rdp">
        <Link class="btn" href={`/rdp/${r.id}/edit`}>
          {t('common.edit')}
        </Link>
        <button type="button" class="btn" disabled={busy === 'toggle'} aria-busy={busy === 'toggle'} onClick={toggle}>
          {r.enabled ? t('common.disable') : t('common.enable')}
        </button>
        <button type="button" class="btn danger" disabled={busy === 'delete'} onClick={remove}>
          {t('common.delete')}
        </button>
      </PageHeader>
      {r.rotation_state === 'pending' && (
        <div class="banner warn" role="status">
          <span>{t('rdp.rotationRouteBanner')}</span> <Link href="/rdp/rotation">{t('rdp.pendingOpen')}</Link>
        </div>
      )}
      <div class="grid-2 rdp-cards">
        <Card title={t('rdp.facts')}>
          <p class="rdp-status">
            <EnabledBadge enabled={r.enabled} />
            <CredBadge route={r} />
          </p>
          <dl class="rdp-facts">
            {facts.map(([k, v]) => (
              <div key={k}>
                <dt>{k}</dt>
                <dd>{v}</dd>
              </div>
            ))}
          </dl>
        </Card>
        <StatusCard route={r} />
        <CredentialsCard route={r} onChange={reload} />
        {r.wol_enabled && <WolCard route={r} />}
      </div>
      <MaintenanceCard route={r} onChange={reload} />
      <HistoryCard route={r} />
    </>
  );
}

function StatusCard(props: { route: RdpRoute }) {
  const r = props.route;
  const { data, error, reload } = useApi<RdpStatusResponse>(`/rdp/${r.id}/status`, RDP_STATUS_EVENTS);
  const [checking, setChecking] = useState(false);
  const [fresh, setFresh] = useState<RdpStatus | null>(null);
  const s = fresh ?? data?.status ?? null;
  const checkNow = async () => {
    setChecking(true);
    try {
      const res = await get<RdpStatusResponse>(`/rdp/${r.id}/status?refresh=true`);
      setFresh(res.status);
      reload();
    } catch (e) {
      toast((e as Error).message, 'bad');
    } finally {
      setChecking(false);
    }
  };
  return (
    <Card
      title={t('rdp.status')}
      class="rdp-status-card"
      actions={
        <button type="button" class="btn small" disabled={checking} aria-busy={checking} onClick={checkNow}>
          {checking ? t('common.loading') : t('rdp.checkNow')}
        </button>
      }
    >
      <ErrorBanner error={error} onRetry={reload} />
      <p>
        <ReachDot route={r} status={s} />
        {!r.enabled && <Badge tone="muted">{t('common.disabled')}</Badge>}
      </p>
      {s && (
        <dl class="rdp-facts">
          {s.checked_at && (
            <div>
              <dt>{t('rdp.checkedAt')}</dt>
              <dd>{fmtDate(s.checked_at)}</dd>
            </div>
          )}
          {(s.paths ?? []).map((p) => (
            <div key={p.path}>
              <dt>{t(`rdp.path_${p.path}`)}</dt>
              <dd>
                {p.host ?? '?'}:{p.port ?? '?'} ·{' '}
                {p.reachable
                  ? p.latency_ms !== null
                    ? t('rdp.reachableMs', { n: p.latency_ms })
                    : t('rdp.reachable')
                  : `${t('rdp.unreachable')}${p.error ? ` (${word(p.error_code, p.error)})` : ''}`}
              </dd>
            </div>
          ))}
          {s.gateway && (
            <div>
              <dt>{t('rdp.gatewayPeer')}</dt>
              <dd>
                {s.gateway.name}: {t(`rdp.gw_${s.gateway.status}`)}
              </dd>
            </div>
          )}
          {s.maintenance && (
            <div>
              <dt>{t('rdp.maintTitle')}</dt>
              <dd>{t('rdp.maintUntil', { to: fmtDate(s.maintenance.to), note: s.maintenance.note || '–' })}</dd>
            </div>
          )}
        </dl>
      )}
    </Card>
  );
}
