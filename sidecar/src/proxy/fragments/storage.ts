// Caddy's certificate storage on PostgreSQL (pure), for several nodes on one database
// (docs/guides/cluster.md#certificates): every node's Caddy keeps its certificates, ACME accounts,
// internal CA and issuance locks in the same tables (caddy-modules/pgstorage), so one node issues a
// certificate while the others wait on the lock, then all serve it. The connection string is not
// written into the configuration: the module reads it from Caddy's environment, where the
// supervisor puts it (supervisor.ts, storageDsn).
import type { Config } from '../../config.js';
import type { Json } from '../caddy-json.js';

/** The variable in Caddy's environment that holds the storage's PostgreSQL URL. */
export const CADDY_STORAGE_DSN_ENV = 'GATEHOUSE_CADDY_STORAGE_DSN';

/** The module's default table (and <table>_locks), in the sidecar's own database. */
export const CADDY_STORAGE_TABLE = 'gatehouse_caddy_storage';

/** The top-level `storage` of the Caddy configuration for shared certificates. */
export function sharedCertificateStorage(): Json {
  return { module: 'gatehouse_postgres', dsn: `{env.${CADDY_STORAGE_DSN_ENV}}` };
}

/**
 * The storage's PostgreSQL URL: the sidecar's own database (DATABASE_URL) when the node runs
 * clustered (GATEHOUSE_CLUSTER); undefined otherwise, and Caddy keeps its files on disk.
 */
export function caddyStorageDsn(config: Pick<Config, 'databaseUrl' | 'cluster'>): string | undefined {
  return config.cluster.enabled && config.databaseUrl ? config.databaseUrl : undefined;
}
