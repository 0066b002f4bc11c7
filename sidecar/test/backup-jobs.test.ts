// Auto-backup jobs: CRUD with validation, `run` at once to a local directory and to a real
// S3-compatible server (s3rver, in this process, on loopback): the object appears, `keep` deletes the
// oldest, the stored object restores; a failing target is shown as the last run's failure and emits
// backup_failed; a cron schedule runs the job through the scheduler (node-schedule).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from './lib/server.js';
import { waitFor } from '../../test/lib/wait.js';
import type { Row } from './lib/rows.js';

const PASS = 'job passphrase 0123';
let s: TestServer;
let h: Record<string, string>;
let s3: { close(): Promise<void> };
let s3Dir: string;
let endpoint = '';
const events: { type: string; [k: string]: unknown }[] = [];

before(async () => {
  // s3rver listens on loopback: the operator's explicit opt-in for the S3 endpoint (util/outbound.ts)
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'backup_s3' });
  h = bearer(await apiToken(s));
  s.deps.events.on('backup_completed', (e) => void events.push(e));
  s.deps.events.on('backup_failed', (e) => void events.push(e));
  s3Dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-s3rver-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: s3Dir, configureBuckets: [{ name: 'gh-backups' }] });
  const addr = (await server.run()) as AddressInfo;
  endpoint = `http://127.0.0.1:${addr.port}`;
  s3 = server;
});
after(async () => {
  await s.deps.backup.stop();
  await s.close();
  await s3.close();
  fs.rmSync(s3Dir, { recursive: true, force: true });
});

const api = apiCall(
  () => s,
  () => h,
);
const client = () => new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });

test('bad input: 400 with fields, nothing stored', async () => {
  const cases: [unknown, string, number][] = [
    // 400: the OpenAPI document says so; 422: valid by the document, refused for a rule it cannot state
    // (what a cron expression means, which fields a target needs)
    [{ name: 'x', schedule: 'sometimes', keep: 3, target: 'local', passphrase: PASS }, 'schedule', 422],
    [{ name: 'x', schedule: 'daily', keep: 0, target: 'local', passphrase: PASS }, 'keep', 400],
    [{ name: 'x', schedule: 'daily', keep: 3, target: 'ftp', passphrase: PASS }, 'target', 400],
    [{ name: 'x', schedule: 'daily', keep: 3, target: 'local', passphrase: 'short' }, 'passphrase', 400],
    [{ name: 'x', schedule: 'daily', keep: 3, target: 's3', passphrase: PASS }, 's3', 422],
    [
      { name: 'x', schedule: 'daily', keep: 3, target: 's3', passphrase: PASS, s3: { bucket: 'gh-backups', access_key_id: 'S3RVER' } },
      's3.secret_access_key',
      422,
    ],
    [
      { name: 'x', schedule: 'daily', keep: 3, target: 's3', passphrase: PASS, s3: { bucket: 'Bad_Bucket', access_key_id: 'a', secret_access_key: 'b' } },
      's3.bucket',
      400,
    ],
  ];
  for (const [body, field, status] of cases) {
    const r = await api('/settings/autobackup', 'POST', body);
    assert.equal(r.status, status, JSON.stringify(r.data));
    assert.ok(r.data.fields?.[field], `${field}: ${JSON.stringify(r.data)}`);
  }
  assert.equal(await s.deps.db.models.BackupJob.count(), 0);
});

test('local target: run at once writes a sealed document; keep deletes the oldest; the view shows the last run', async () => {
  const c = await api('/settings/autobackup', 'POST', { name: 'local', schedule: '30 2 * * 1-5', keep: 2, target: 'local', passphrase: PASS });
  assert.equal(c.status, 201, JSON.stringify(c.data));
  const id = c.data.job.id;
  assert.equal(c.data.job.last_run, null);
  assert.ok(!JSON.stringify(c.data).includes(PASS), 'the passphrase is never shown');
  const row = ((await s.deps.db.models.BackupJob.findByPk(id, { raw: true })) as Row<'BackupJob'> | null)!;
  assert.equal(s.deps.crypto.open(row.passphrase_enc), PASS, 'stored sealed with the master key');
  for (let i = 0; i < 3; i++) {
    const r = await api(`/settings/autobackup/${id}/run`, 'POST');
    assert.equal(r.status, 200, JSON.stringify(r.data));
    assert.equal(r.data.job.last_run!.status, 'ok', JSON.stringify(r.data.job.last_run));
    await new Promise((res) => setTimeout(res, 5)); // not a condition: distinct millisecond names (the cron test below needs the real clock)
  }
  const dir = path.join(s.dataDir, 'backups', `job-${id}`);
  const files = fs.readdirSync(dir).sort();
  assert.equal(files.length, 2, `keep 2: ${files.join(', ')}`);
  const last = (await api(`/settings/autobackup/${id}`)).data.job.last_run;
  assert.equal(last!.file, path.join(dir, files[1]));
  assert.equal(last!.bytes, fs.statSync(last!.file).size);
  assert.equal((fs.statSync(last!.file).mode & 0o777).toString(8), '600');
  // the stored document opens with the job's passphrase (a dry run on this server: nothing changes)
  const dry = await s.deps.backup.restore(fs.readFileSync(last!.file), { passphrase: PASS, mode: 'replace', dryRun: true });
  assert.equal(dry.summary.created + dry.summary.removed, 0, JSON.stringify(dry.summary));
  assert.ok(events.some((e) => e.type === 'backup_completed' && e.job_id === id && e.target === 'local'));
});

test('S3 target against s3rver: the object appears, keep deletes the oldest, the secret is sealed at rest', async () => {
  const c = await api('/settings/autobackup', 'POST', {
    name: 'offsite',
    schedule: 'weekly',
    keep: 2,
    target: 's3',
    passphrase: PASS,
    s3: { bucket: 'gh-backups', prefix: 'gatehouse/', region: 'us-east-1', endpoint, access_key_id: 'S3RVER', secret_access_key: 'S3RVER' },
  });
  assert.equal(c.status, 201, JSON.stringify(c.data));
  const id = c.data.job.id;
  assert.equal(c.data.job.s3!.secret_set, true);
  assert.ok(!('secret_access_key' in c.data.job.s3!));
  const row = ((await s.deps.db.models.BackupJob.findByPk(id, { raw: true })) as Row<'BackupJob'> | null)!;
  assert.notEqual(row.s3_secret_enc, 'S3RVER');
  const keys = async () =>
    ((await client().send(new ListObjectsV2Command({ Bucket: 'gh-backups', Prefix: 'gatehouse/' }))).Contents ?? []).map((o) => o.Key!).sort();
  const seen: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await api(`/settings/autobackup/${id}/run`, 'POST');
    assert.equal(r.data.job.last_run!.status, 'ok', JSON.stringify(r.data.job.last_run));
    const now = await keys();
    seen.push(now[now.length - 1]);
    assert.equal(r.data.job.last_run!.file, `s3://gh-backups/${now[now.length - 1]}`);
    await new Promise((res) => setTimeout(res, 5)); // not a condition: distinct millisecond names
  }
  assert.deepEqual(await keys(), seen.slice(1), 'the oldest object was deleted, the two newest kept');
  // the object is a backup document that restores (dry run)
  const obj = await client().send(new GetObjectCommand({ Bucket: 'gh-backups', Key: seen[2] }));
  const text = await obj.Body!.transformToString();
  assert.equal(JSON.parse(text).format, 'gatehouse-backup');
  const dry = await s.deps.backup.restore(text, { passphrase: PASS, mode: 'merge', dryRun: true });
  assert.equal(dry.summary.created, 0);
  // edit without the secret keeps it; a wrong bucket fails visibly, with backup_failed
  const e = await api(`/settings/autobackup/${id}`, 'PUT', { s3: { bucket: 'no-such-bucket' } });
  assert.equal(e.status, 200, JSON.stringify(e.data));
  assert.equal(e.data.job.s3!.secret_set, true);
  const failed = await api(`/settings/autobackup/${id}/run`, 'POST');
  assert.equal(failed.status, 200);
  assert.equal(failed.data.job.last_run!.status, 'failed');
  assert.ok(failed.data.job.last_run!.error);
  assert.deepEqual(
    failed.data.job.last_run!.error_code,
    { code: 'backup.target.error', params: { detail: failed.data.job.last_run!.error } },
    'the target’s words as a coded detail',
  );
  assert.ok(events.some((x) => x.type === 'backup_failed' && x.job_id === id));
  // delete
  assert.equal((await api(`/settings/autobackup/${id}`, 'DELETE')).status, 200);
  assert.equal((await api(`/settings/autobackup/${id}`)).status, 404);
});

test('a cron schedule runs the job through the scheduler (node-schedule)', async () => {
  await s.deps.backup.start();
  const c = await api('/settings/autobackup', 'POST', { name: 'every second', schedule: '* * * * * *', keep: 1, target: 'local', passphrase: PASS });
  assert.equal(c.status, 201, JSON.stringify(c.data));
  assert.ok(c.data.job.next_run_at, 'next run shown');
  const id = c.data.job.id;
  await waitFor(async () => (await api(`/settings/autobackup/${id}`)).data.job.last_run?.status === 'ok', 10_000);
  // disabled: no further runs scheduled
  const d = await api(`/settings/autobackup/${id}`, 'PUT', { enabled: false });
  assert.equal(d.data.job.next_run_at, null);
});

test('a run that fell due while no node led is made once by the node that takes the lead; a due time is run once', async () => {
  await s.deps.backup.start();
  // due at this minute of every hour, a minute ago (local time, as node-schedule reads a rule): the
  // next run is an hour away, so no scheduled run comes between the checks below
  const m = (new Date().getMinutes() + 59) % 60;
  const c = await api('/settings/autobackup', 'POST', { name: 'hourly at minute', schedule: `${m} * * * *`, keep: 1, target: 'local', passphrase: PASS });
  assert.equal(c.status, 201, JSON.stringify(c.data));
  const id = c.data.job.id;
  const ran = () => events.filter((e) => e.type === 'backup_completed' && e.job_id === id).length;
  // a job created after its last due time has missed nothing
  assert.deepEqual(await s.deps.backup.catchUpMissed(), []);
  // the job existed before that due time and never ran: two nodes taking the lead at once run it once
  await s.deps.db.models.BackupJob.update({ created_at: Date.now() - 3 * 3_600_000, last_run_at: null }, { where: { id } });
  const both = await Promise.all([s.deps.backup.catchUpMissed(), s.deps.backup.catchUpMissed()]);
  assert.deepEqual(both.flat(), [id]);
  assert.equal(ran(), 1);
  assert.equal((await api(`/settings/autobackup/${id}`)).data.job.last_run?.status, 'ok');
  // claimed: a later takeover finds nothing missed
  assert.deepEqual(await s.deps.backup.catchUpMissed(), []);
  // a due time more than MISSED_RUN_GRACE_MS ago is not made up (the next scheduled run comes instead)
  const old = await api('/settings/autobackup', 'POST', {
    name: 'daily long ago',
    schedule: `${m} ${(new Date().getHours() + 21) % 24} * * *`,
    keep: 1,
    target: 'local',
    passphrase: PASS,
  });
  await s.deps.db.models.BackupJob.update({ created_at: Date.now() - 30 * 3_600_000, last_run_at: null }, { where: { id: old.data.job.id } });
  assert.deepEqual(await s.deps.backup.catchUpMissed(), []);
  assert.equal(ran(), 1);
});
