import { messageRefSchema } from '@gatehouse/common/messages/ref.js';
// Request and response schemas of the backup endpoints (zod): validation and the OpenAPI document.
import { z } from 'zod';
import { ignoringReadOnly, storedResourceFields } from '../http/input.js';
import { text, UNPROCESSABLE } from '../http/fields.js';
import { validCron } from '../util/cron.js';
import { fieldText } from '../http/messages.js';

/** The shortest passphrase that seals a backup's secrets (backup/envelope.ts). */
export const PASSPHRASE_MIN = 12;

/**
 * Largest restore upload: 64 MiB. A document carries each route's login-page images (at most 2 MiB
 * each, logo and background, base64 adds a third) besides the rows, so this admits about ten routes
 * with both images at their largest plus tens of thousands of peers and routes.
 */
export const BACKUP_MAX_BYTES = 64 * 1024 * 1024;

export const passphrase = z
  .string()
  .min(PASSPHRASE_MIN, fieldText('field.min_chars', { min: PASSPHRASE_MIN }))
  .max(1024);

/** GET /settings/backup: the passphrase travels in a header, never in the URL. */
export const downloadHeaders = z.object({
  'X-Backup-Passphrase': z
    .string({
      error: (i) =>
        i.input === undefined ? `required: the passphrase that seals the backup's secrets (at least ${PASSPHRASE_MIN} characters)` : 'must be text',
    })
    .min(PASSPHRASE_MIN, fieldText('field.min_chars', { min: PASSPHRASE_MIN }))
    .max(1024, 'at most 1024 characters')
    .meta({ description: `the passphrase that seals the backup's secrets (at least ${PASSPHRASE_MIN} characters); restoring needs it` }),
});

export const downloadQuery = z.strictObject({
  format: z
    .enum(['json', 'download'])
    .optional()
    .meta({ description: 'download: sent as an attachment (Content-Disposition) named gatehouse-backup-<UTC time>.json' }),
});

const boolish = z.union([z.literal('1'), z.literal('0'), z.literal('true'), z.literal('false')]).transform((v) => v === '1' || v === 'true');

export const restoreQuery = z.strictObject({
  mode: z
    .enum(['merge', 'replace'])
    .meta({ description: "replace: the server holds exactly the document afterwards; merge: the document's items are added or updated, nothing is removed" }),
  dry_run: boolish.optional().meta({ description: '1: list what would be created, changed and removed; write nothing' }),
});
/** The text fields of the multipart restore upload (the document is the file field "file"). */
export const restoreBody = z.strictObject({ passphrase: z.string().min(1, 'required').max(1024) });

const schedule = z
  .string()
  .trim()
  .min(1, 'required')
  .max(128)
  .refine((v) => v === 'daily' || v === 'weekly' || validCron(v), {
    message: 'must be daily, weekly or a cron expression ("m h dom mon dow")',
    params: UNPROCESSABLE,
  })
  .meta({ description: 'daily (03:00), weekly (Sunday 03:00) or a cron expression, server local time' });

const s3Fields = {
  bucket: z
    .string()
    .trim()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be an S3 bucket name'),
  prefix: text({ max: 255 })
    .refine((v) => !v.includes('\\'), { message: 'must not contain backslashes', params: UNPROCESSABLE })
    .optional(),
  region: z
    .string()
    .max(64)
    .regex(/^\s*[a-z0-9-]*\s*$/, 'must be a region name like eu-central-1')
    .trim()
    .nullable()
    .optional(),
  endpoint: z
    .string()
    .max(255)
    .regex(/^https?:\/\/[^\s]+$/, 'must be an http(s) URL')
    .url('must be a URL')
    .nullable()
    .optional()
    .meta({
      description:
        'An S3-compatible server (path-style addressing). 422 "not allowed" when it is or resolves to loopback, a private range or this server, unless the operator set GATEHOUSE_OUTBOUND_ALLOW_PRIVATE=backup_s3; every connection of a run is checked again',
    }),
  access_key_id: z.string().max(255).regex(/\S/, 'required').trim(),
  secret_access_key: z.string().min(1).max(1024).optional().meta({ description: 'write-only; stored sealed; omit on update to keep the stored one' }),
};
const s3Create = z.strictObject(s3Fields);
const s3Update = z.strictObject({ ...s3Fields, bucket: s3Fields.bucket.optional(), access_key_id: s3Fields.access_key_id.optional() });

export const jobCreateBody = z.strictObject({
  name: text({ min: 1, max: 64 }),
  enabled: z.boolean().optional(),
  schedule,
  keep: z.number().int().min(1).max(1000),
  target: z.enum(['local', 's3']),
  s3: s3Create.optional(),
  passphrase: passphrase.meta({ description: "the passphrase the job's backups are sealed with; stored sealed with the master key, never shown again" }),
});
/** What PUT /settings/autobackup/:id accepts and ignores besides the writable fields (docs/reference/api.md "Conventions"). */
export const JOB_READ_ONLY = storedResourceFields('auto-backup job');
export const jobUpdateBody = ignoringReadOnly(
  z.strictObject({
    name: text({ min: 1, max: 64 }).optional(),
    enabled: z.boolean().optional(),
    schedule: schedule.optional(),
    keep: z.number().int().min(1).max(1000).optional(),
    target: z.enum(['local', 's3']).optional(),
    s3: s3Update.optional(),
    passphrase: passphrase.optional(),
  }),
  JOB_READ_ONLY,
);
export type JobCreate = z.infer<typeof jobCreateBody>;
export type JobUpdate = z.infer<typeof jobUpdateBody>;

const iso = z.string().meta({ format: 'date-time' });
export const jobView = z.object({
  id: z.number().int(),
  name: z.string(),
  enabled: z.boolean(),
  schedule: z.string(),
  keep: z.number().int(),
  target: z.enum(['local', 's3']),
  s3: z
    .object({
      bucket: z.string(),
      prefix: z.string(),
      region: z.string().nullable(),
      endpoint: z.string().nullable(),
      access_key_id: z.string(),
      secret_set: z.boolean(),
    })
    .nullable(),
  next_run_at: iso.nullable(),
  last_run: z
    .object({
      at: iso,
      status: z.enum(['ok', 'failed']),
      error: z.string().nullable(),
      error_code: messageRefSchema
        .nullable()
        .meta({ description: "error as a message: backup.target.not_allowed, or backup.target.error with the target's (S3's) own words as `detail`" }),
      file: z.string().nullable(),
      bytes: z.number().nullable(),
      duration_ms: z.number().nullable(),
    })
    .nullable(),
  created_at: iso,
  updated_at: iso,
});
export type JobView = z.infer<typeof jobView>;
export const jobListResponse = z.object({ ok: z.literal(true), jobs: z.array(jobView) });
export const jobResponse = z.object({ ok: z.literal(true), job: jobView });

/** One row of a restore's plan: its id and label; changed: the columns whose value differs; note: what the restore had to adapt. */
export const planItem = z.object({
  id: z.union([z.string(), z.number()]),
  label: z.string(),
  fields: z.array(z.string()).optional(),
  note: z.string().optional(),
});
/** What a restore (or its dry run) did, or would do. */
/** What a restore does (did) to one section's rows. */
const sectionPlan = z.object({ created: z.array(planItem), changed: z.array(planItem), removed: z.array(planItem), unchanged: z.number().int() });
export type SectionPlan = z.infer<typeof sectionPlan>;
const restoreResult = z.object({
  mode: z.enum(['merge', 'replace']),
  dry_run: z.boolean(),
  version: z.number().int(),
  migrated_from: z.number().int().nullable(),
  created_at: z.string(),
  plan: z.record(z.string(), sectionPlan),
  summary: z.object({ created: z.number().int(), changed: z.number().int(), removed: z.number().int(), unchanged: z.number().int() }),
  /** after a real restore: how the one apply to Caddy and WireGuard went (null: ok / not managed) */
  applied: z.object({ proxy: z.string().nullable(), wireguard: z.string().nullable() }).nullable(),
});
export type RestoreResult = z.infer<typeof restoreResult>;
export const restoreResponse = z.object({ ok: z.literal(true), ...restoreResult.shape });
/** The document's encryption header (docs/guides/backup.md): the scrypt parameters and salt of the
 * passphrase key, and a sealed check text. Read back with these bounds before any key is derived. */
export const encryptionHeader = z.object({
  kdf: z.literal('scrypt'),
  N: z
    .number()
    .int()
    .min(1024)
    .max(2 ** 20)
    .refine((n) => (n & (n - 1)) === 0, fieldText('backup.field.power_of_two')),
  r: z.number().int().min(1).max(32),
  p: z.number().int().min(1).max(16),
  salt: z.string().min(16).max(64),
  cipher: z.literal('aes-256-gcm'),
  check: z.string().min(1).max(200),
});
export type EncryptionHeader = z.output<typeof encryptionHeader>;

export const backupResponse = z
  .object({
    format: z.literal('gatehouse-backup'),
    version: z.number().int(),
    created_at: z.string(),
    server_version: z.string(),
    encryption: encryptionHeader,
    sections: z.record(z.string(), z.array(z.record(z.string(), z.unknown()))),
    files: z.record(z.string(), z.string()),
    integrity: z.object({ alg: z.literal('hmac-sha256'), hmac: z.string() }),
  })
  .meta({ description: 'The backup document itself (not wrapped in {ok}); docs/guides/backup.md' });
export type BackupDocument = z.output<typeof backupResponse>;
