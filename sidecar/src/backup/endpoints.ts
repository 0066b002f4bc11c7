// Backup and restore: GET /settings/backup, POST /settings/backup/restore,
// and the auto-backup jobs under /settings/autobackup. Thin: the work is in service.ts.
import { msg } from '@gatehouse/common/messages/index.js';
import type Koa from 'koa';
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { actingUserId, type Principal } from '../http/auth.js';
import { unprocessable, validation } from '../util/errors.js';
import { uploadedFile } from '../http/body.js';
import {
  BACKUP_MAX_BYTES,
  backupResponse,
  downloadHeaders,
  downloadQuery,
  jobCreateBody,
  jobListResponse,
  jobResponse,
  jobUpdateBody,
  restoreBody,
  restoreQuery,
  restoreResponse,
} from './schema.js';
import { okOnly } from '../http/responses.js';

export const PASSPHRASE_HEADER = 'x-backup-passphrase';

export function backupEndpoints(ctx: AppContext): Endpoint[] {
  const svc = () => ctx.backup;
  const actor = (c: { state: { principal?: Principal } }) => actingUserId(c.state.principal) ?? undefined;
  const tags = ['backup'];
  return [
    defineEndpoint({
      method: 'GET',
      path: '/settings/backup',
      adminRole: true,
      secrets:
        'every secret the server holds (the WireGuard server key, peer private and preshared keys, the SMTP password, webhook secrets, TOTP secrets, gateway push tokens, the RDP private keys that open the stored RDP credentials, auto-backup S3 keys and passphrases; password and token hashes), sealed under a passphrase the caller chooses',
      tags,
      query: downloadQuery,
      headers: downloadHeaders,
      response: backupResponse,
      summary: `The complete backup document (every peer with its keys, group, tag, route with every setting, route auth with its images, gateway, user, token hash, auto-backup job, setting and the SMTP settings). Secrets are sealed under the passphrase given in the ${PASSPHRASE_HEADER} header (at least 12 characters; never in the URL). format=download sends it as an attachment`,
      handler: async ({ query }, c: Koa.Context) => {
        const pass = c.get(PASSPHRASE_HEADER);
        if (!pass) throw validation(msg('backup.passphrase_required', { header: PASSPHRASE_HEADER }), { passphrase: msg('field.required') });
        const { body, name } = await svc().download(pass);
        c.set('Cache-Control', 'no-store');
        if (query.format === 'download') c.attachment(name);
        c.type = 'application/json';
        c.body = body;
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/settings/backup/restore',
      adminRole: true,
      tags,
      query: restoreQuery,
      body: restoreBody,
      response: restoreResponse,
      multipart: { field: 'file', maxBytes: BACKUP_MAX_BYTES },
      summary: `Restore a backup document (multipart: file = the document, passphrase = the passphrase it was made with; at most ${BACKUP_MAX_BYTES} bytes). mode=replace makes the server hold exactly the document (and ends every sign-in), mode=merge adds and updates and removes nothing; dry_run=1 lists what would be created, changed and removed and writes nothing. One transaction, then one apply to Caddy and WireGuard. A bad or damaged document: 422 with fields, nothing changed`,
      handler: async ({ query, body }, c: Koa.Context) => {
        const file = uploadedFile(c);
        if (!file) throw validation(msg('backup.document_required'), { file: msg('field.required') });
        if (!file.buffer.length) throw unprocessable(msg('backup.document_empty'), { file: msg('field.empty_file') });
        return { ...(await svc().restore(file.buffer, { passphrase: body.passphrase, mode: query.mode, dryRun: query.dry_run ?? false, actor: actor(c) })) };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/settings/autobackup',
      adminRole: true,
      tags,
      response: jobListResponse,
      summary: 'Auto-backup jobs with their next run and the outcome of the last one',
      handler: async () => ({ jobs: await svc().listJobs() }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/settings/autobackup',
      adminRole: true,
      secrets: 'sends complete backups (every secret, sealed under a passphrase the caller chooses) to a target the caller chooses, on a schedule',
      status: 201,
      tags,
      body: jobCreateBody,
      storedChecks: (raw) => svc().storedProblems(raw),
      response: jobResponse,
      summary:
        'Create an auto-backup job {name, schedule (daily | weekly | cron), keep, target (local | s3), s3?: {bucket, prefix, region, endpoint, access_key_id, secret_access_key}, passphrase}',
      handler: async ({ body }, c) => ({ job: await svc().createJob(body, actor(c)) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/settings/autobackup/:id',
      adminRole: true,
      tags,
      response: jobResponse,
      summary: 'One auto-backup job',
      handler: async ({ params }) => ({ job: await svc().getJob(Number(params.id)) }),
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/settings/autobackup/:id',
      adminRole: true,
      secrets: 'changes where complete backups (every secret) go and the passphrase that opens them; stored credentials stay and go to the new target',
      tags,
      body: jobUpdateBody,
      storedChecks: (raw, ctx) => svc().storedProblems(raw, Number(ctx.state.params.id)),
      response: jobResponse,
      summary: 'Change an auto-backup job (fields as on create, all optional; secrets omitted keep their stored value)',
      handler: async ({ params, body }, c) => ({ job: await svc().updateJob(Number(params.id), body, actor(c)) }),
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/settings/autobackup/:id',
      response: okOnly,
      adminRole: true,
      tags,
      summary: 'Delete an auto-backup job (the backups it made stay where they are)',
      handler: async ({ params }, c) => {
        await svc().removeJob(Number(params.id), actor(c));
        return {};
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/settings/autobackup/:id/run',
      adminRole: true,
      secrets: "sends a complete backup (every secret, sealed under the job's passphrase) to the job's target now",
      tags,
      response: jobResponse,
      summary: 'Run the job at once; answers when it is done, with last_run showing the outcome (ok or failed and why)',
      handler: async ({ params }) => ({ job: await svc().runJob(Number(params.id)) }),
    }),
  ];
}
