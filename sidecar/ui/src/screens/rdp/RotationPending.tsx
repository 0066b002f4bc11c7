// Pending credential rotations (/rdp/rotation): after a master-key rotation every route with stored
// credentials waits here. The old envelopes were made for the retired key, so an admin re-enters the
// credentials on the route's page (encrypted for the new key) and then acknowledges; until then the
// desktop client's connect is refused with that reason.
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { toast } from '../../components/dialog';
import { DataTable, type Column } from '../../components/table';
import { Badge, EmptyState, ErrorBanner, Link, PageHeader, Spinner } from '../../components/ui';
import { useApi, useTitle } from '../../hooks';
import { fmtDate, t } from '../../i18n';
import type { RotationPendingResponse } from '../../protocol';
import { RDP_EVENTS, type RdpRoute } from './model';

export default function RotationPending() {
  useTitle(t('rdp.rotationTitle'));
  const { data, error, reload } = useApi<RotationPendingResponse>('/rdp/rotation/pending', [...RDP_EVENTS, 'master_key_rotated']);
  const [busy, setBusy] = useState<number | null>(null);
  const currentKid = data?.current_kid ?? null;
  const reentered = (r: RdpRoute) => r.has_credentials && currentKid !== null && r.credentials_kid === currentKid;

  const ack = async (r: RdpRoute) => {
    setBusy(r.id);
    try {
      await api('POST', `/rdp/${r.id}/rotation/ack`);
      toast(t('rdp.ackDone', { name: r.name }));
      reload();
    } catch (e) {
      toast((e as Error).message, 'bad');
    } finally {
      setBusy(null);
    }
  };

  const columns: Column<RdpRoute>[] = [
    { key: 'name', label: t('rdp.name'), render: (r) => <Link href={`/rdp/${r.id}`}>{r.name}</Link> },
    { key: 'since', label: t('rdp.pendingSince'), render: (r) => fmtDate(r.rotation_pending_since) },
    {
      key: 'creds',
      label: t('rdp.credentials'),
      render: (r) =>
        reentered(r) ? (
          <Badge tone="ok">{t('rdp.reentered', { at: fmtDate(r.credentials_updated_at) })}</Badge>
        ) : (
          <Badge tone="warn">{t('rdp.notReentered')}</Badge>
        ),
    },
    {
      key: 'actions',
      label: t('common.actions'),
      class: 'actions',
      render: (r) => (
        <span class="row-actions">
          <Link class="btn small" href={`/rdp/${r.id}`} aria-label={t('rdp.reenterFor', { name: r.name })}>
            {t('rdp.reenter')}
          </Link>
          <button
            type="button"
            class="btn small primary"
            disabled={!reentered(r) || busy === r.id}
            aria-busy={busy === r.id}
            aria-label={t('rdp.ackFor', { name: r.name })}
            title={reentered(r) ? undefined : t('rdp.ackBlocked')}
            onClick={() => ack(r)}
          >
            {t('rdp.ack')}
          </button>
        </span>
      ),
    },
  ];

  return (
    <>
      <PageHeader title={t('rdp.rotationTitle')} back="/rdp" />
      <p class="banner warn rdp-rotation-note" role="note">
        {t('rdp.rotationExplain')}
      </p>
      <ErrorBanner error={error} onRetry={reload} />
      {!data && !error ? (
        <Spinner />
      ) : (
        data && (
          <DataTable
            label={t('rdp.rotationTitle')}
            columns={columns}
            rows={data.routes}
            rowKey={(r) => r.id}
            empty={<EmptyState title={t('rdp.rotationEmpty')} text={t('rdp.rotationEmptyText')} />}
          />
        )
      )}
    </>
  );
}
