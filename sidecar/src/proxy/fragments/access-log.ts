// Caddy's access log (server level, pure): every HTTP server logs every request as JSON lines to one
// file in the data directory, which the sidecar reads (resilience/access-log.ts).
import path from 'node:path';
import type { CaddyConfig, Json } from '../caddy-json.js';

/** Caddy's JSON access log: <dataDir>/caddy/access.log, read by the sidecar (resilience/access-log.ts). */
export const accessLogFile = (dataDir: string) => path.join(dataDir, 'caddy', 'access.log');
export const ACCESS_LOGGER = 'gatehouse';
/**
 * Roll settings of the access-log file (Caddy's file writer; roll_size_mb is the default of
 * GATEHOUSE_ACCESS_LOG_ROLL_MB). Rotated files stay uncompressed (access-<time>.log): the sidecar
 * finishes reading a rotated file by its inode, which gzip (Caddy's default) would replace within
 * a moment of the rotation, losing the lines not read yet; compressing 20 MB also cost Caddy
 * ~0.3 s of CPU on every rotation, taken from live traffic.
 */
export const ACCESS_LOG_ROLL = { roll_size_mb: 20, roll_keep: 3, roll_keep_days: 7, roll_compression: 'none' };

/**
 * Every HTTP server logs every request to the logger http.log.access.gatehouse
 * (`logs.default_logger_name`, one name for all hosts instead of a host→name map of 10,000
 * entries); the sidecar maps each line's Host to its route. The logger writes JSON lines to
 * `file` only (excluded from Caddy's default log), with a `token` query parameter redacted.
 */
export function addAccessLog(cfg: CaddyConfig, servers: Record<string, Json>, file: string, rollMb = ACCESS_LOG_ROLL.roll_size_mb): void {
  for (const srv of Object.values(servers)) srv.logs = { default_logger_name: ACCESS_LOGGER };
  cfg.logging = {
    logs: {
      default: { exclude: [`http.log.access.${ACCESS_LOGGER}`] },
      [ACCESS_LOGGER]: {
        writer: { output: 'file', filename: file, ...ACCESS_LOG_ROLL, roll_size_mb: rollMb },
        // The query parameter `token` (GET /metrics?token=<API token> through the admin domain) is
        // written as REDACTED, for every host: a credential in a URL never reaches the log file.
        encoder: {
          format: 'filter',
          wrap: { format: 'json' },
          fields: { 'request>uri': { filter: 'query', actions: [{ type: 'replace', parameter: 'token', value: 'REDACTED' }] } },
        },
        include: [`http.log.access.${ACCESS_LOGGER}`],
      },
    },
  };
}
