// Restoring a read document (document.ts readDocument) into the database, in ONE transaction.
//
// - replace: the database ends up holding exactly the document: every covered table is emptied and
//   the document's rows are written with their ids (rows of excluded tables that hang on a removed
//   peer or route go with it; admin and visitor sessions all end).
// - merge: every document row is matched to an existing row by its section's identity (sections.ts):
//   a match is updated to the document's values (its id kept), anything else is created with a new
//   id; references between sections follow the ids rows get. Nothing is removed.
// - dry run: the same writes run, the changes are listed, and the transaction is rolled back.
//
// The plan lists, per section, what is created, changed (with the columns) and removed. Secrets are
// compared by their plaintext, branding images by their content.
import { msg } from '@gatehouse/common/messages/index.js';
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Transaction } from 'sequelize';
import type { Database } from '../db/index.js';
import type { MasterKey } from '../util/crypto.js';
import { AppError, type FieldMessages } from '../util/errors.js';
import { formatIPv4, parseIPv4 } from '@gatehouse/common/wireguard/render.js';
import { sniffImage, type BrandingStore } from '../route-auth/branding.js';
import { readRows, type OpenedDocument } from './document.js';
import { mapRefIds, SECTIONS, type Row, type Section } from './sections.js';
import type { z } from 'zod';
import type { planItem, SectionPlan } from './schema.js';

export type RestoreMode = 'merge' | 'replace';

/** One row of a restore's plan (a merged peer whose address is taken here gets a free one: note says so). */
export type PlanItem = z.infer<typeof planItem>;
export type RestorePlan = Record<string, SectionPlan>;

/** A branding file to write once the transaction committed. */
export interface PendingFile {
  name: string;
  data: Buffer;
}

export interface RestoreOptions {
  db: Database;
  master: MasterKey;
  branding: BrandingStore;
  doc: OpenedDocument;
  mode: RestoreMode;
  dryRun: boolean;
  /** this server's VPN subnet: restored peer addresses must lie in it */
  subnet: { base: number; size: number; cidr: string };
}

class DryRun extends Error {}

const PG_CHUNK = 500;

/** Runs the restore; resolves with the plan and the branding files to write (none on a dry run). */
export async function runRestore(o: RestoreOptions): Promise<{ plan: RestorePlan; files: PendingFile[] }> {
  let plan: RestorePlan = {};
  let files: PendingFile[] = [];
  try {
    await o.db.sequelize.transaction(async (t) => {
      const r = await restoreIn(o, t);
      plan = r.plan;
      files = r.files;
      if (o.dryRun) throw new DryRun();
    });
  } catch (err) {
    if (!(err instanceof DryRun)) throw mapDbError(err);
  }
  return { plan, files: o.dryRun ? [] : files };
}

function mapDbError(err: unknown): unknown {
  const e = err as { name?: string; message?: string; fields?: unknown; table?: string; original?: { message?: string } };
  if (e?.name === 'SequelizeUniqueConstraintError') {
    const cols = Array.isArray(e.fields) ? (e.fields as string[]) : Object.keys((e.fields as Record<string, unknown>) ?? {});
    return new AppError(
      'conflict',
      msg('backup.conflicts', { error: String(e.original?.message ?? e.message) }),
      Object.fromEntries((cols.length ? cols : ['document']).map((c) => [c, msg('field.taken_by_other_row')])),
    );
  }
  if (e?.name === 'SequelizeForeignKeyConstraintError' || e?.name === 'SequelizeDatabaseError' || e?.name === 'SequelizeValidationError') {
    return new AppError('validation', msg('backup.does_not_fit', { error: String(e.original?.message ?? e.message) }), {
      document: msg('backup.field.database_says', { error: String(e.original?.message ?? e.message) }),
    });
  }
  return err;
}

const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

async function restoreIn(o: RestoreOptions, t: Transaction): Promise<{ plan: RestorePlan; files: PendingFile[] }> {
  const { db, master, doc, mode } = o;
  const plan: RestorePlan = {};
  const files: PendingFile[] = [];
  const idMaps = new Map<string, Map<string, unknown>>();
  const plainOf = (s: Section, r: Row): Row => {
    let row = { ...r };
    for (const [col, kind] of Object.entries(s.secrets ?? {}))
      if (kind === 'master' && typeof row[col] === 'string') row[col] = master.open(row[col] as string);
    if (s.rowSecrets) row = s.rowSecrets.out(row, (kind, v) => (kind === 'master' ? master.open(v) : v));
    return row;
  };
  const storedOf = (s: Section, r: Row): Row => {
    let row = { ...r };
    for (const [col, kind] of Object.entries(s.secrets ?? {}))
      if (kind === 'master' && typeof row[col] === 'string') row[col] = master.seal(row[col] as string);
    if (s.rowSecrets) row = s.rowSecrets.in(row, (kind, v) => (kind === 'master' ? master.seal(v) : v));
    return row;
  };
  const fileDigest = (name: unknown): string | null => {
    const f = typeof name === 'string' ? o.branding.file(name) : null;
    if (!f || !fs.existsSync(f)) return null;
    return sha(fs.readFileSync(f));
  };

  // what the database holds now, secrets in plaintext
  const current = new Map<string, Row[]>();
  for (const s of SECTIONS)
    current.set(
      s.name,
      (await readRows(db, s, t)).map((r) => plainOf(s, r)),
    );

  if (mode === 'replace') {
    for (const s of [...SECTIONS].reverse()) await s.model(db.models).destroy({ where: {}, transaction: t });
    // sign-ins: the accounts are the document's now
    await db.models.Session.destroy({ where: {}, transaction: t });
    await db.models.RouteAuthSession.destroy({ where: {}, transaction: t });
    await db.models.RouteAuthCode.destroy({ where: {}, transaction: t });
  }

  // peer addresses: inside this server's subnet; a merge gives a peer whose address is taken a free one
  const first = o.subnet.base + 2;
  const last = o.subnet.base + o.subnet.size - 2;
  const taken = new Set<number>();
  if (mode === 'merge') for (const r of current.get('peers')!) taken.add(parseIPv4(String(r.address)) ?? -1);
  const outside: FieldMessages = {};
  (doc.sections.peers ?? []).forEach((r, i) => {
    const n = parseIPv4(String(r.address));
    if (n === null || n < first || n > last)
      outside[`sections.peers.${i}.address`] = msg('backup.field.outside_subnet', { address: String(r.address), cidr: o.subnet.cidr });
  });
  if (Object.keys(outside).length) throw new AppError('validation', msg('backup.peers_outside_subnet'), outside);
  const readdress = (row: Row, existing: Row | undefined): string | undefined => {
    if (mode !== 'merge') return undefined;
    const own = parseIPv4(String(row.address))!;
    if (existing && parseIPv4(String(existing.address)) === own) return undefined;
    if (!taken.has(own)) {
      taken.add(own);
      return undefined;
    }
    let n = first;
    while (n <= last && taken.has(n)) n++;
    if (n > last) throw new AppError('conflict', msg('backup.subnet_full', { cidr: o.subnet.cidr }));
    taken.add(n);
    const from = String(row.address);
    const to = formatIPv4(n);
    row.address = to;
    row.allowed_ips = String(row.allowed_ips)
      .split(',')
      .map((x) => (x.trim() === `${from}/32` ? `${to}/32` : x.trim()))
      .join(',');
    return `address ${from} is taken here: it gets ${to} (download its client config again)`;
  };

  for (const s of SECTIONS) {
    const model = s.model(db.models);
    const sp: SectionPlan = { created: [], changed: [], removed: [], unchanged: 0 };
    plan[s.name] = sp;
    const idMap = new Map<string, unknown>();
    idMaps.set(s.name, idMap);
    const have = current.get(s.name)!;
    const byKey = new Map<string, Row>();
    for (const r of have) byKey.set(mode === 'replace' ? String(r[s.pk]) : s.identity(r), r);
    const matched = new Set<Row>();
    const inserts: Row[] = [];

    for (const docRow of doc.sections[s.name] ?? []) {
      // references: ids as they are on this server
      const row: Row = { ...docRow };
      if (mode === 'merge') {
        for (const [col, ref] of Object.entries(s.refs ?? {})) {
          if (row[col] === null || row[col] === undefined) continue;
          const map = idMaps.get(ref.section)!;
          // a loose reference's unknown id: undefined drops its object (mapRefIds)
          row[col] = mapRefIds(ref, row[col], (x) => map.get(String(x)) ?? (ref.loose ? undefined : x));
        }
      }
      for (const [col, v] of Object.entries(s.reset ?? {})) row[col] = v;
      const key = mode === 'replace' ? String(row[s.pk]) : s.identity(row);
      const existing = byKey.get(key);
      const note = s.name === 'peers' ? readdress(row, existing) : undefined;
      if (existing) matched.add(existing);
      if (mode === 'merge') {
        if (existing) row[s.pk] = existing[s.pk];
        else if (s.autoId) delete row[s.pk];
      }
      // branding images: compare by content; written under a new name after the commit
      const fileCols: Record<string, Buffer> = {};
      for (const col of s.files ?? []) {
        const name = row[col];
        if (typeof name !== 'string') continue;
        const data = doc.files[name];
        if (existing && fileDigest(existing[col]) === sha(data)) row[col] = existing[col];
        else fileCols[col] = data;
      }
      const diff = existing ? changedColumns(s, existing, row, Object.keys(fileCols)) : [];
      const label = s.label(docRow);
      if (!existing) sp.created.push({ id: String(docRow[s.pk]), label, ...(note ? { note } : {}) });
      else if (diff.length) sp.changed.push({ id: String(existing[s.pk]), label, fields: diff, ...(note ? { note } : {}) });
      else sp.unchanged++;

      const write = async (stored: Row): Promise<unknown> => {
        if (mode === 'replace') {
          inserts.push(stored);
          return stored[s.pk];
        }
        if (existing) {
          if (diff.length) await model.update(withoutPk(s, stored), { where: { [s.pk]: existing[s.pk] }, transaction: t });
          return existing[s.pk];
        }
        // reason: the section's model is typed by no row interface (sections are generic), so Sequelize cannot type the created instance
        const created = (await model.create(stored, { transaction: t })) as unknown as { get(k: string): unknown };
        return created.get(s.pk);
      };
      // file names depend on the route id: known for replace and updates; for a created row, after the insert
      const assignFiles = (routeId: unknown, stored: Row) => {
        for (const [col, data] of Object.entries(fileCols)) {
          const type = sniffImage(data)!;
          const name = `route-${String(routeId)}-${col === 'logo' ? 'logo' : 'bg'}-${crypto.randomBytes(8).toString('hex')}.${type.ext}`;
          stored[col] = name;
          files.push({ name, data });
        }
      };
      const stored = storedOf(s, row);
      const routeId = s.refs?.route_id ? stored.route_id : undefined;
      assignFiles(routeId, stored);
      const newId = await write(stored);
      idMap.set(String(docRow[s.pk]), newId);
    }
    if (mode === 'replace') {
      for (let i = 0; i < inserts.length; i += PG_CHUNK) await model.bulkCreate(inserts.slice(i, i + PG_CHUNK), { transaction: t });
      for (const r of have) if (!matched.has(r)) sp.removed.push({ id: String(r[s.pk]), label: s.label(r) });
    }
  }
  if (mode === 'replace' && db.dialect === 'postgres') {
    // explicit ids do not move PostgreSQL's sequences: set each to the highest id restored
    for (const s of SECTIONS.filter((x) => x.autoId)) {
      await db.sequelize.query(
        `SELECT setval(pg_get_serial_sequence('"${s.table}"', '${s.pk}'), COALESCE((SELECT MAX("${s.pk}") FROM "${s.table}"), 1), (SELECT COUNT(*) FROM "${s.table}") > 0)`,
        { transaction: t },
      );
    }
  }
  return { plan, files };
}

function withoutPk(s: Section, r: Row): Row {
  const { [s.pk]: _pk, ...rest } = r;
  return rest;
}

function changedColumns(s: Section, before: Row, after: Row, fileCols: string[]): string[] {
  const out: string[] = [];
  for (const [col, v] of Object.entries(after)) {
    if (col === s.pk || (s.reset && col in s.reset)) continue;
    if (fileCols.includes(col)) {
      out.push(col);
      continue;
    }
    if (s.rowSecrets && col === 'value') {
      // settings: compare the JSON values, not their text
      if (!sameJson(before[col], v)) out.push(col);
      continue;
    }
    if (before[col] !== v) out.push(col);
  }
  return out;
}

function sameJson(a: unknown, b: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(String(a))) === JSON.stringify(JSON.parse(String(b)));
  } catch {
    return a === b;
  }
}
