// The cluster panel of the System screen: GET /cluster (the nodes, their roles, keepalived state,
// last heartbeat, version and Caddy configuration hash, and the leader), reloaded on the cluster
// events. Without cluster mode it says this node runs alone. Admins get a Remove button on a lost
// node (DELETE /cluster/nodes/:name, after a confirmation); other roles do not see it.
import { api } from '../../api';
import { confirmAction, toast } from '../../components/dialog';
import { Card, ErrorBanner, Spinner, StatusDot } from '../../components/ui';
import { useApi } from '../../hooks';
import { fmtAgo, t } from '../../i18n';
import { isAdmin } from '../../session';
import type { ClusterNode, ClusterNodeRemovedResponse, ClusterResponse } from '../../protocol';

export function ClusterCard() {
  const { data, error, reload } = useApi<ClusterResponse>('/cluster', [
    'cluster_node_joined',
    'cluster_node_lost',
    'cluster_leader_changed',
    'cluster_node_removed',
    'config_changed',
  ]);
  // the Remove button (a lost node): admins, in cluster mode (alone, the one node is this node)
  const removable = isAdmin() && !!data?.enabled;
  const remove = async (n: ClusterNode) => {
    if (!(await confirmAction(t('system.confirmRemoveNode', { name: n.name }), { confirmLabel: t('system.removeNode') }))) return;
    try {
      await api<ClusterNodeRemovedResponse>('DELETE', `/cluster/nodes/${encodeURIComponent(n.name)}`);
      toast(t('system.nodeRemoved', { name: n.name }));
      reload();
    } catch (err) {
      toast((err as Error).message, 'bad');
    }
  };
  return (
    <Card title={t('system.cluster')}>
      <ErrorBanner error={error} onRetry={reload} />
      {!data ? (
        !error && <Spinner />
      ) : (
        <>
          <p data-testid="cluster-leader">
            {!data.enabled ? t('system.clusterOff') : data.leader ? t('system.clusterLeader', { leader: data.leader }) : t('system.clusterNoLeader')}
          </p>
          <div class="table-wrap">
            <table class="table" aria-label={t('system.cluster')}>
              <thead>
                <tr>
                  <th scope="col">{t('system.colNode')}</th>
                  <th scope="col">{t('system.colAddress')}</th>
                  <th scope="col">{t('system.colRole')}</th>
                  <th scope="col">{t('system.colVrrp')}</th>
                  <th scope="col">{t('system.colLastSeen')}</th>
                  <th scope="col">{t('system.colVersion')}</th>
                  <th scope="col">{t('system.colConfig')}</th>
                  {removable && <th scope="col">{t('system.colActions')}</th>}
                </tr>
              </thead>
              <tbody>
                {data.nodes.map((n) => (
                  <tr key={n.name} data-testid="cluster-node" data-role={n.role} data-lost={String(n.lost)}>
                    <td data-label={t('system.colNode')}>
                      <strong>{n.name}</strong>
                      {n.name === data.node && <span class="muted"> ({t('system.clusterThisNode')})</span>}
                    </td>
                    <td data-label={t('system.colAddress')}>{n.address ?? '–'}</td>
                    <td data-label={t('system.colRole')}>
                      <StatusDot
                        state={n.lost ? 'down' : n.role === 'leader' ? 'up' : 'off'}
                        label={n.lost ? t('system.nodeLost') : t(`system.role_${n.role}`)}
                      />
                    </td>
                    <td data-label={t('system.colVrrp')}>{t(`system.vrrp_${n.vrrp}`)}</td>
                    <td data-label={t('system.colLastSeen')}>{fmtAgo(n.last_seen_at)}</td>
                    <td data-label={t('system.colVersion')}>
                      <code>{n.version}</code>
                    </td>
                    <td data-label={t('system.colConfig')}>
                      <code class="secret">{n.config_hash ? n.config_hash.slice(0, 12) : '–'}</code>
                    </td>
                    {removable && (
                      <td data-label={t('system.colActions')}>
                        {n.lost && n.name !== data.node && (
                          <button
                            type="button"
                            class="btn danger small"
                            data-testid="cluster-node-remove"
                            aria-label={t('system.removeNodeLabel', { name: n.name })}
                            onClick={() => void remove(n)}
                          >
                            {t('system.removeNode')}
                          </button>
                        )}
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </Card>
  );
}
