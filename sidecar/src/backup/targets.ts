// Where an auto-backup job puts its documents, and how `keep` prunes them:
// - local: <dataDir>/backups/job-<id>/gatehouse-backup-<UTC time>.json (mode 0600)
// - s3: s3://<bucket>/<prefix>gatehouse-backup-<UTC time>.json through the AWS SDK (any S3-compatible
//   server: endpoint given -> path-style addressing); every connection through the request-forgery
//   guard's agents (util/outbound.ts, policy backup_s3)
// The time in the name sorts as text, so the oldest are the first by name; only names of this form
// are counted and deleted (other objects under the prefix are left alone).
import fs from 'node:fs';
import path from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { GuardedHttpAgent, GuardedHttpsAgent, type OutboundPolicy } from '../util/outbound.js';

export const BACKUP_NAME_RE = /^gatehouse-backup-\d{8}T\d{9}Z\.json$/;
const S3_TIMEOUT_MS = 60_000;

export function backupFileName(now: number): string {
  const iso = new Date(now).toISOString(); // 2026-11-24T21:05:01.123Z
  return `gatehouse-backup-${iso.replace(/[-:]/g, '').replace('.', '')}.json`;
}

export interface S3Settings {
  bucket: string;
  prefix: string;
  region: string;
  endpoint: string | null;
  accessKeyId: string;
  secretAccessKey: string;
}

export interface Target {
  /** stores one document; returns where (a path or s3:// URL) */
  put(name: string, body: Buffer): Promise<string>;
  /** deletes the oldest backups beyond `keep`; returns their names */
  prune(keep: number): Promise<string[]>;
}

export function localTarget(dir: string): Target {
  return {
    async put(name, body) {
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      const file = path.join(dir, name);
      const tmp = `${file}.part`;
      fs.writeFileSync(tmp, body, { mode: 0o600 });
      fs.renameSync(tmp, file);
      return file;
    },
    async prune(keep) {
      let names: string[] = [];
      try {
        names = fs
          .readdirSync(dir)
          .filter((n) => BACKUP_NAME_RE.test(n))
          .sort();
      } catch {
        return [];
      }
      const gone = names.slice(0, Math.max(0, names.length - keep));
      for (const n of gone) fs.rmSync(path.join(dir, n), { force: true });
      return gone;
    },
  };
}

export function s3Target(s: S3Settings, policy: OutboundPolicy): Target {
  // The AWS SDK (hundreds of modules) is loaded at the first S3 operation, not at every start.
  let connected: Promise<{ sdk: typeof import('@aws-sdk/client-s3'); client: S3Client }> | null = null;
  const connect = () =>
    (connected ??= import('@aws-sdk/client-s3').then((sdk) => ({
      sdk,
      client: new sdk.S3Client({
        // every connection through the request-forgery guard (util/outbound.ts, policy backup_s3)
        requestHandler: { httpAgent: new GuardedHttpAgent(policy, { keepAlive: true }), httpsAgent: new GuardedHttpsAgent(policy, { keepAlive: true }) },
        region: s.region || 'us-east-1',
        endpoint: s.endpoint || undefined,
        forcePathStyle: Boolean(s.endpoint),
        credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey },
      }),
    })));
  const prefix = s.prefix ?? '';
  const opts = () => ({ abortSignal: AbortSignal.timeout(S3_TIMEOUT_MS) });
  return {
    async put(name, body) {
      const { sdk, client } = await connect();
      await client.send(new sdk.PutObjectCommand({ Bucket: s.bucket, Key: prefix + name, Body: body, ContentType: 'application/json' }), opts());
      return `s3://${s.bucket}/${prefix}${name}`;
    },
    async prune(keep) {
      const { sdk, client } = await connect();
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const r = await client.send(new sdk.ListObjectsV2Command({ Bucket: s.bucket, Prefix: prefix, ContinuationToken: token }), opts());
        for (const o of r.Contents ?? []) if (o.Key && BACKUP_NAME_RE.test(o.Key.slice(prefix.length))) keys.push(o.Key);
        token = r.IsTruncated ? r.NextContinuationToken : undefined;
      } while (token);
      keys.sort();
      const gone = keys.slice(0, Math.max(0, keys.length - keep));
      for (const k of gone) await client.send(new sdk.DeleteObjectCommand({ Bucket: s.bucket, Key: k }), opts());
      return gone.map((k) => k.slice(prefix.length));
    },
  };
}
