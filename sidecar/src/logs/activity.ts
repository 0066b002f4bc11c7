// The activity log: one helper writes every admin-visible event.
// - Domain events (events.ts) become rows here: activityFor() says which row an event makes (the
//   services emit the event, not the row). Other rows (admin actions with no domain event) are
//   written with record() directly.
// - Every row written is announced on the bus as `activity_recorded` (the live UI's feed).
import { Op, type WhereOptions } from 'sequelize';
import type { ActivityRow, Models } from '../db/models.js';
import type { ActivityEntry, DomainEvent, EventBus } from '../events.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';

export type { ActivityEntry } from '../events.js';

export type Severity = 'info' | 'warning' | 'error' | 'critical';
export const SEVERITIES: Severity[] = ['info', 'warning', 'error', 'critical'];

export interface ActivityEvent {
  severity?: Severity;
  source: string;
  event_type: string;
  message: string;
  details?: Record<string, unknown>;
  user_id?: number | null;
  ip?: string | null;
}

export interface ActivityFilter {
  severity?: string;
  source?: string;
  event_type?: string;
  since?: number;
  until?: number;
  limit?: number;
  offset?: number;
}

export class ActivityLog {
  constructor(
    private models: Models,
    private clock: Clock,
    private log: Logger,
    private events?: EventBus,
  ) {
    // the rows that domain events make
    events?.onAny(async (e) => {
      const row = activityFor(e);
      if (row) await this.record(row);
    });
  }

  async record(e: ActivityEvent): Promise<ActivityEntry> {
    const row = await this.models.Activity.create({
      severity: e.severity ?? 'info',
      source: e.source,
      event_type: e.event_type,
      message: e.message,
      details: e.details ? JSON.stringify(e.details) : null,
      user_id: e.user_id ?? null,
      ip: e.ip ?? null,
      created_at: this.clock(),
    });
    const entry = toEntry(row.get({ plain: true }) as ActivityRow);
    this.log.info(e.message, { activity: e.event_type, source: e.source, severity: entry.severity });
    await this.events?.emit({ type: 'activity_recorded', entry });
    return entry;
  }

  private where(f: ActivityFilter): WhereOptions {
    const w: Record<string | symbol, unknown> = {};
    if (f.severity) w.severity = f.severity;
    if (f.source) w.source = f.source;
    if (f.event_type) w.event_type = f.event_type;
    if (f.since !== undefined || f.until !== undefined) {
      const range: Record<symbol, number> = {};
      if (f.since !== undefined) range[Op.gte] = f.since;
      if (f.until !== undefined) range[Op.lte] = f.until;
      w.created_at = range;
    }
    return w as WhereOptions;
  }

  async query(f: ActivityFilter): Promise<{ entries: ActivityEntry[]; total: number }> {
    const where = this.where(f);
    const [rows, total] = await Promise.all([
      this.models.Activity.findAll({ where, order: [['created_at', 'DESC'], ['id', 'DESC']], limit: f.limit ?? 100, offset: f.offset ?? 0, raw: true }),
      this.models.Activity.count({ where }),
    ]);
    return { entries: (rows as unknown as ActivityRow[]).map(toEntry), total };
  }

  async clear(): Promise<number> {
    return this.models.Activity.destroy({ where: {} });
  }
}

function toEntry(r: ActivityRow): ActivityEntry {
  let details: Record<string, unknown> | null = null;
  if (r.details) {
    try {
      details = JSON.parse(r.details);
    } catch {
      details = { raw: r.details };
    }
  }
  return {
    id: r.id,
    severity: r.severity,
    source: r.source,
    event_type: r.event_type,
    message: r.message,
    details,
    user_id: r.user_id,
    ip: r.ip,
    created_at: new Date(Number(r.created_at)).toISOString(),
    timestamp: Number(r.created_at),
  };
}

const peerLabel = (e: { name: string }) => `Peer "${e.name}"`;

/** The activity row a domain event makes, or null (not every event is a row). */
export function activityFor(e: DomainEvent): ActivityEvent | null {
  switch (e.type) {
    case 'peer_created':
      return { source: 'peers', event_type: e.type, message: `${peerLabel(e)} created (${e.address})`, details: { peer_id: e.peer_id, address: e.address, peer_type: e.peer_type }, user_id: e.actor };
    case 'peer_updated':
      return { source: 'peers', event_type: e.type, message: `${peerLabel(e)} updated (${e.fields.join(', ')})`, details: { peer_id: e.peer_id, fields: e.fields.map((k) => (k === 'public_key' ? 'keys' : k)) }, user_id: e.actor };
    case 'peer_enabled':
    case 'peer_disabled':
      return { source: 'peers', event_type: e.type, message: `${peerLabel(e)} ${e.type === 'peer_enabled' ? 'enabled' : 'disabled'}`, details: { peer_id: e.peer_id }, user_id: e.actor };
    case 'peer_deleted':
      return { source: 'peers', event_type: e.type, message: `${peerLabel(e)} deleted (${e.address})`, details: { peer_id: e.peer_id, address: e.address }, user_id: e.actor };
    case 'peer_expired':
      return { severity: 'warning', source: 'peers', event_type: e.type, message: `${peerLabel(e)} expired and was removed from the tunnel`, details: { peer_id: e.peer_id, name: e.name, expires_at: e.expires_at, enabled: e.enabled } };
    case 'peer_online':
    case 'peer_offline':
      return { source: 'wireguard', event_type: e.type, message: `${peerLabel(e)} is ${e.type === 'peer_online' ? 'online' : 'offline'}`, details: { peer_id: e.peer_id, name: e.name, endpoint: e.endpoint, latestHandshake: e.latest_handshake } };
    case 'peer_group_created':
      return { source: 'peers', event_type: e.type, message: `Peer group "${e.name}" created`, details: { group_id: e.group_id }, user_id: e.actor };
    case 'peer_group_updated':
      return { source: 'peers', event_type: e.type, message: `Peer group "${e.name}" updated`, details: { group_id: e.group_id, fields: e.fields }, user_id: e.actor };
    case 'peer_group_deleted':
      return { source: 'peers', event_type: e.type, message: `Peer group "${e.name}" deleted (${e.peers_ungrouped} peers ungrouped)`, details: { group_id: e.group_id, peers_ungrouped: e.peers_ungrouped }, user_id: e.actor };
    case 'tag_created':
      return { source: 'peers', event_type: e.type, message: `Tag "${e.name}" registered`, details: { tag_id: e.tag_id }, user_id: e.actor };
    case 'tag_renamed':
      return { source: 'peers', event_type: e.type, message: `Tag "${e.from}" renamed to "${e.to}" (on ${e.peers_updated} peers)`, details: { from: e.from, to: e.to, registered: e.registered, peers_updated: e.peers_updated }, user_id: e.actor };
    case 'tag_deleted':
      return { source: 'peers', event_type: e.type, message: `Tag "${e.name}" deleted (removed from ${e.peers_updated} peers)`, details: { registered: e.registered, peers_updated: e.peers_updated }, user_id: e.actor };
    case 'user_created':
      return { source: 'users', event_type: e.type, message: `User ${e.username} created`, details: { id: e.user_id, role: e.role }, user_id: e.actor };
    case 'user_updated':
      return { source: 'users', event_type: e.type, message: `User ${e.username} updated`, details: { id: e.user_id, fields: e.fields }, user_id: e.actor };
    case 'user_deleted':
      return { source: 'users', event_type: e.type, message: `User ${e.username} deleted`, details: { id: e.user_id }, user_id: e.actor };
    case 'token_created':
      return { source: 'tokens', event_type: e.type, message: `API token ${e.name} created`, details: { id: e.token_id, scopes: e.scopes }, user_id: e.actor };
    case 'token_revoked':
      return { source: 'tokens', event_type: e.type, message: `API token ${e.name} revoked`, details: { id: e.token_id }, user_id: e.actor };
    case 'token_fingerprint_reset':
      return { source: 'tokens', event_type: e.type, message: `Machine binding of API token ${e.name} reset`, details: { id: e.token_id }, user_id: e.actor };
    case 'token_updated':
      return { source: 'tokens', event_type: e.type, message: `API token ${e.name} updated (${e.fields.join(', ')})`, details: { id: e.token_id, fields: e.fields }, user_id: e.actor };
    case 'client_registered':
      return {
        source: 'clients', event_type: e.type,
        message: `Desktop client ${e.hostname} (${e.platform}, ${e.client_version}) registered as peer "${e.peer_name}"`,
        details: { machine_id: e.machine_id, token_id: e.token_id, peer_id: e.peer_id, hostname: e.hostname, platform: e.platform, client_version: e.client_version, new_machine: e.new_machine },
        user_id: e.actor,
      };
    case 'settings_changed': {
      const row = { source: 'settings', event_type: e.type, user_id: e.actor };
      if (e.section === 'default_theme') return { ...row, message: `Default theme set to ${e.theme}` };
      if (e.section === 'security') return { ...row, message: 'Lockout settings changed', details: e.lockout };
      return { ...row, message: `Uptime monitoring interval set to ${e.interval_seconds} s`, details: { interval_seconds: e.interval_seconds, previous: e.previous } };
    }
    case 'smtp_updated':
      return { source: 'settings', event_type: e.type, message: `SMTP settings saved (${e.host}:${e.port})`, details: { host: e.host, port: e.port, secure: e.secure, user: e.user, password_changed: e.password_changed }, user_id: e.actor };
    case 'route_created':
      return { source: 'routes', event_type: e.type, message: `Route ${e.domain} created`, details: { route_id: e.route_id, route_type: e.route_type }, user_id: e.actor };
    case 'route_updated':
      return { source: 'routes', event_type: e.type, message: `Route ${e.domain} updated`, details: { route_id: e.route_id, fields: e.fields }, user_id: e.actor };
    case 'route_enabled':
    case 'route_disabled':
      return { source: 'routes', event_type: e.type, message: `Route ${e.domain} ${e.type === 'route_enabled' ? 'enabled' : 'disabled'}`, details: { route_id: e.route_id }, user_id: e.actor };
    case 'route_deleted':
      return { source: 'routes', event_type: e.type, message: `Route ${e.domain} deleted`, details: { route_id: e.route_id }, user_id: e.actor };
    case 'rdp_route_created':
      return { source: 'rdp', event_type: e.type, message: `RDP route ${e.name} created (${e.access_mode})`, details: { rdp_route_id: e.rdp_route_id, access_mode: e.access_mode }, user_id: e.actor };
    case 'rdp_route_updated':
      return { source: 'rdp', event_type: e.type, message: `RDP route ${e.name} updated`, details: { rdp_route_id: e.rdp_route_id, fields: e.fields }, user_id: e.actor };
    case 'rdp_route_deleted':
      return { source: 'rdp', event_type: e.type, message: `RDP route ${e.name} deleted`, details: { rdp_route_id: e.rdp_route_id }, user_id: e.actor };
    case 'rdp_route_toggled':
      return { source: 'rdp', event_type: e.type, message: `RDP route ${e.name} ${e.enabled ? 'enabled' : 'disabled'}`, details: { rdp_route_id: e.rdp_route_id, enabled: e.enabled }, user_id: e.actor };
    case 'route_auth_created':
    case 'route_auth_updated': {
      const created = e.type === 'route_auth_created';
      return {
        source: 'routes', event_type: e.type,
        message: `Route auth ${created ? 'enabled' : 'updated'} on ${e.domain} (${e.method}${e.two_factor_method ? ` + ${e.two_factor_method}` : ''})`,
        details: { route_id: e.route_id, method: e.method, two_factor_method: e.two_factor_method, sessions_ended: e.sessions_ended, password_changed: e.password_changed },
        user_id: e.actor,
      };
    }
    case 'route_auth_deleted':
      return { source: 'routes', event_type: e.type, message: `Route auth removed from ${e.domain}; its sessions ended`, details: { route_id: e.route_id }, user_id: e.actor };
    case 'routes_batch':
      return { source: 'routes', event_type: `routes_batch_${e.action}`, message: `Batch ${e.action} of ${e.route_ids.length} route(s)`, details: { ids: e.route_ids }, user_id: e.actor };
    case 'route_up':
    case 'route_down': {
      const up = e.type === 'route_up';
      return {
        severity: up ? 'info' : 'warning', source: 'monitoring', event_type: e.type,
        message: `Route ${e.domain} is ${up ? 'up' : 'down'}${e.error ? `: ${e.error}` : e.status !== null ? ` (HTTP ${e.status})` : ''}`,
        details: { route_id: e.route_id, status: e.status, response_ms: e.response_ms, error: e.error },
      };
    }
    case 'circuit_open':
      return { severity: 'warning', source: 'routes', event_type: 'circuit_breaker_open', message: `Circuit breaker of route ${e.route_id} opened after ${e.failure_count} consecutive failures`, details: { route_id: e.route_id, failure_count: e.failure_count } };
    case 'circuit_closed':
      return { source: 'routes', event_type: 'circuit_breaker_closed', message: `Circuit breaker of route ${e.route_id} closed: a trial request succeeded after ${e.open_seconds} s open`, details: { route_id: e.route_id, open_seconds: e.open_seconds } };
    case 'gateway_online':
    case 'gateway_offline':
    case 'gateway_unknown': {
      const { type: _type, ...t } = e;
      return { severity: t.to === 'offline' ? 'warning' : 'info', source: 'gateways', event_type: e.type, message: `Gateway "${t.name}" is ${t.to} (was ${t.from}): ${t.reason}`, details: { ...t } };
    }
    case 'login_failed':
      return { severity: 'warning', source: 'auth', event_type: e.type, message: `Failed login for ${e.username}`, details: { username: e.username, failures: e.failures }, ip: e.ip };
    case 'account_locked':
      return { severity: 'warning', source: 'auth', event_type: e.type, message: `Account ${e.username} locked after ${e.failures} failed logins`, details: { username: e.username, until: e.until }, ip: e.ip };
    case 'backup_completed':
      return { source: 'backup', event_type: e.type, message: `Backup ${e.file ?? ''} written (${e.target}, ${e.bytes} bytes)`.replace('  ', ' '), details: { job_id: e.job_id, target: e.target, file: e.file, bytes: e.bytes, duration_ms: e.duration_ms } };
    case 'backup_failed':
      return { severity: 'error', source: 'backup', event_type: e.type, message: `Backup failed (${e.target}): ${e.error}`, details: { job_id: e.job_id, target: e.target, error: e.error } };
    case 'licence_changed':
      return { source: 'license', event_type: e.type, message: `Licence ${e.reason}: plan ${e.plan}`, details: { reason: e.reason, plan: e.plan, features: e.features, expires_at: e.expires_at }, user_id: e.actor };
    case 'master_key_rotated':
      return { severity: 'warning', source: e.source, event_type: e.type, message: `Master key rotated (${e.source}): ${e.sealed_values} sealed values re-sealed`, details: { sealed_values: e.sealed_values, tables: e.tables, hooks: e.hooks }, user_id: e.actor };
    case 'webhook_created':
      return { source: 'webhooks', event_type: e.type, message: `Webhook "${e.name}" created (${e.events.length} event kinds)`, details: { webhook_id: e.webhook_id, url: e.url, events: e.events }, user_id: e.actor };
    case 'webhook_updated':
      return { source: 'webhooks', event_type: e.type, message: `Webhook "${e.name}" updated (${e.fields.join(', ')})`, details: { webhook_id: e.webhook_id, fields: e.fields }, user_id: e.actor };
    case 'webhook_enabled':
    case 'webhook_disabled':
      return { source: 'webhooks', event_type: e.type, message: `Webhook "${e.name}" ${e.type === 'webhook_enabled' ? 'enabled' : 'disabled'}`, details: { webhook_id: e.webhook_id }, user_id: e.actor };
    case 'webhook_deleted':
      return { source: 'webhooks', event_type: e.type, message: `Webhook "${e.name}" deleted`, details: { webhook_id: e.webhook_id }, user_id: e.actor };
    case 'webhook_delivery_failed':
      return { severity: 'warning', source: 'webhooks', event_type: e.type, message: `Webhook "${e.name}": delivery of ${e.event} failed after ${e.attempts} attempt(s)${e.error ? `: ${e.error}` : ''}`, details: { webhook_id: e.webhook_id, delivery_id: e.delivery_id, event: e.event, attempts: e.attempts, error: e.error } };
    case 'rdp_status_changed':
      return {
        severity: e.reachable ? 'info' : 'warning', source: 'rdp', event_type: e.type,
        message: `RDP route "${e.name}" is ${e.reachable ? `reachable again (${e.path}${e.latency_ms !== null ? `, ${e.latency_ms} ms` : ''})` : `unreachable (${e.path}${e.error ? `: ${e.error}` : ''})`}`,
        details: { rdp_route_id: e.rdp_route_id, reachable: e.reachable, previous: e.previous, latency_ms: e.latency_ms, path: e.path, error: e.error },
      };
    case 'rdp_session_started':
      return {
        source: 'rdp', event_type: e.type, message: `RDP session ${e.session_id} on "${e.name}" started${e.client_name ? ` by ${e.client_name}` : ''}`,
        details: { session_id: e.session_id, rdp_route_id: e.rdp_route_id, client_name: e.client_name, peer_id: e.peer_id, token_id: e.token_id, user_id: e.user_id, machine_id: e.machine_id },
      };
    case 'rdp_session_ended':
      return {
        severity: e.reason === 'lost' ? 'warning' : 'info', source: 'rdp', event_type: e.type,
        message: `RDP session ${e.session_id} on "${e.name}" ended (${e.reason}) after ${e.duration_s} s`,
        details: { session_id: e.session_id, rdp_route_id: e.rdp_route_id, client_name: e.client_name, reason: e.reason, duration_s: e.duration_s }, user_id: e.actor,
      };
    case 'webhook_delivery_updated': // the delivery log is the webhook's own (GET /webhooks/:id/deliveries)
    case 'config_changed':
    case 'peer_traffic':
    case 'wireguard_state': // the restart, sync and interface messages are logged where they happen
    case 'caddy_state':
    case 'activity_recorded':
    case 'rows_changed':
    case 'user_credentials_changed': // the users service records user_deleted / user_updated / password rows itself
      return null;
  }
}
