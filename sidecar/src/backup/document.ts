// The backup document: made from the database (makeDocument), and read back (readDocument: parse,
// integrity, migration of older versions, validation with `fields`, secrets opened). Pure of HTTP.
//
// {
//   "format": "gatehouse-backup", "version": 1, "created_at": ISO, "server_version": "0.1.0",
//   "encryption": {kdf, N, r, p, salt, cipher, check},          (envelope.ts)
//   "sections": { "<section>": [ {<every column of the row>}, ... ], ... },   (sections.ts)
//   "files": { "<branding file name>": "<base64>" },
//   "integrity": { "alg": "hmac-sha256", "hmac": "..." }
// }
import fs from 'node:fs';
import type { Transaction } from 'sequelize';
import type { Database } from '../db/index.js';
import { MASTER_SEALED, type MasterKey } from '../util/crypto.js';
import { AppError, unprocessable, type FieldMessages } from '../util/errors.js';
import { msg, type Msg } from '@gatehouse/common/messages/index.js';
import { issueMessage } from '../http/messages.js';
import { canonicalJson } from '@gatehouse/common/canonical.js';
import { APP_VERSION } from '../version.js';
import { sniffImage, type BrandingStore } from '../route-auth/branding.js';
import { BRANDING_MAX_BYTES } from '../route-auth/schema.js';
import { PassphraseKey } from './envelope.js';
import { encryptionHeader, type BackupDocument, type EncryptionHeader } from './schema.js';
import { refIds, SECTIONS, type Row, type Section, type SecretKind } from './sections.js';
import { findRows } from '../db/define.js';

export const BACKUP_FORMAT = 'gatehouse-backup';
/** The document version this server writes. Older ones are migrated on restore (DOC_MIGRATIONS). */
export const BACKUP_VERSION = 1;

/**
 * Upgrades of older documents: DOC_MIGRATIONS[n] turns a version-n document (its sections and files)
 * into a version n+1 one. Version 1 is the first, so there are none yet; when a table or column
 * changes, bump BACKUP_VERSION and add the step here (sidecar/test/backup.test.ts shows the hook at
 * work with a synthetic version-0 document).
 */
export type DocMigration = (doc: { sections: Record<string, unknown>; files: Record<string, unknown> }) => {
  sections: Record<string, unknown>;
  files: Record<string, unknown>;
};
export const DOC_MIGRATIONS: Readonly<Record<number, DocMigration>> = {};

/** A document read back: rows with their secrets in plaintext, files as bytes. */
export interface OpenedDocument {
  version: number;
  migrated_from: number | null;
  created_at: string;
  sections: Record<string, Row[]>;
  files: Record<string, Buffer>;
}

// ------------------------------------------------------------------ column types

type ColType = 'bool' | 'int' | 'num' | 'text';
export interface Column {
  name: string;
  type: ColType;
  nullable: boolean;
}

export function columnsOf(s: Section, db: Database): Column[] {
  const attrs = s.model(db.models).getAttributes() as Record<
    string,
    { type: { key?: string; constructor: { key?: string } }; allowNull?: boolean; primaryKey?: boolean }
  >;
  return Object.entries(attrs).map(([name, a]) => {
    const key = a.type.key ?? a.type.constructor.key ?? 'STRING';
    const type: ColType =
      key === 'BOOLEAN' ? 'bool' : key === 'INTEGER' || key === 'BIGINT' ? 'int' : key === 'DOUBLE' || key === 'FLOAT' || key === 'DECIMAL' ? 'num' : 'text';
    return { name, type, nullable: !(a.allowNull === false || a.primaryKey === true) };
  });
}

const toBool = (v: unknown) => v === true || v === 1 || v === '1' || v === 't' || v === 'true';

/** A database row in JSON types (SQLite 0/1 and PostgreSQL booleans alike; BIGINT as numbers). */
export function normalizeRow(cols: Column[], r: Row): Row {
  const out: Row = {};
  for (const c of cols) {
    const v = r[c.name];
    if (v === null || v === undefined) out[c.name] = null;
    else if (c.type === 'bool') out[c.name] = toBool(v);
    else if (c.type === 'int' || c.type === 'num') out[c.name] = Number(v);
    else out[c.name] = String(v);
  }
  return out;
}

export async function readRows(db: Database, s: Section, transaction?: Transaction): Promise<Row[]> {
  const cols = columnsOf(s, db);
  const rows = await findRows(s.model(db.models), { transaction, order: [[s.pk, 'ASC']] });
  return rows.map((r) => normalizeRow(cols, r));
}

// ------------------------------------------------------------------ making a document

export interface MakeOptions {
  db: Database;
  master: MasterKey;
  branding: BrandingStore;
  passphrase: string;
  now: number;
}

export async function makeDocument(o: MakeOptions): Promise<BackupDocument> {
  const key = await PassphraseKey.create(o.passphrase);
  const plainOf = (kind: SecretKind, v: string) => (kind === 'master' ? o.master.open(v) : v);
  const sections: Record<string, Row[]> = {};
  const files: Record<string, string> = {};
  // one read transaction: every section from the same moment
  await o.db.sequelize.transaction(async (t) => {
    for (const s of SECTIONS) {
      const rows = await readRows(o.db, s, t);
      sections[s.name] = rows.map((r) => {
        let row = { ...r };
        for (const [col, kind] of Object.entries(s.secrets ?? {})) {
          if (typeof row[col] === 'string') row[col] = key.seal(plainOf(kind, row[col] as string), `${s.name}.${col}`);
        }
        if (s.rowSecrets) row = s.rowSecrets.out(row, (kind, v) => key.seal(plainOf(kind, v), `${s.name}.${String(row[s.pk])}`));
        for (const col of s.files ?? []) {
          const name = row[col];
          if (typeof name !== 'string' || !name) continue;
          const file = o.branding.file(name);
          if (file && fs.existsSync(file)) files[name] = fs.readFileSync(file).toString('base64');
          else row[col] = null; // the image is gone from disk: the document does not name it
        }
        return row;
      });
    }
  });
  // Safety net: no value sealed with the master key may leave undeclared (it could not be opened
  // after a restore, and the secret would be lost); a new secret column must be declared in sections.ts.
  for (const [name, rows] of Object.entries(sections)) {
    for (const row of rows) {
      for (const [col, v] of Object.entries(row)) {
        if (typeof v !== 'string') continue;
        for (const m of v.matchAll(MASTER_SEALED)) {
          let opens = false;
          try {
            o.master.open(m[0]);
            opens = true;
          } catch {
            /* not one of ours */
          }
          if (opens) throw new Error(`backup: ${name}.${col} holds a value sealed with the master key that sections.ts does not declare as a secret`);
        }
      }
    }
  }
  const body = {
    format: BACKUP_FORMAT,
    version: BACKUP_VERSION,
    created_at: new Date(o.now).toISOString(),
    server_version: APP_VERSION,
    encryption: key.header,
    sections,
    files,
  };
  return { ...body, integrity: { alg: 'hmac-sha256', hmac: key.hmac(canonicalJson(body)) } } as BackupDocument;
}

// ------------------------------------------------------------------ reading a document

function bad(message: Msg, fields: FieldMessages): AppError {
  return unprocessable(message, fields);
}

export interface ReadOptions {
  db: Database;
  passphrase: string;
  migrations?: Readonly<Record<number, DocMigration>>;
  /** the version this server reads (default BACKUP_VERSION; tests of the migration hook set it) */
  currentVersion?: number;
}

/** Parses, checks and opens a document. Every problem is a 400 with fields naming where it is. */
export async function readDocument(text: string | Buffer, o: ReadOptions): Promise<OpenedDocument> {
  const current = o.currentVersion ?? BACKUP_VERSION;
  const migrations = o.migrations ?? DOC_MIGRATIONS;
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.isBuffer(text) ? text.toString('utf8') : text);
  } catch (err) {
    throw bad(msg('backup.doc.not_json', { error: (err as Error).message }), { file: msg('backup.doc.field.not_json') });
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw bad(msg('backup.doc.not_object'), { file: msg('backup.doc.field.not_backup') });
  const d = doc as Record<string, unknown>;
  if (d.format !== BACKUP_FORMAT)
    throw bad(msg('backup.doc.wrong_format', { format: BACKUP_FORMAT }), { format: msg('backup.doc.field.must_be', { value: BACKUP_FORMAT }) });
  if (typeof d.version !== 'number' || !Number.isInteger(d.version) || d.version < 0)
    throw bad(msg('backup.doc.no_version'), { version: msg('backup.doc.field.non_negative_integer') });
  if (d.version > current) throw bad(msg('backup.doc.newer', { version: d.version, current }), { version: msg('backup.doc.field.at_most', { max: current }) });
  for (let v = d.version; v < current; v++)
    if (!migrations[v])
      throw bad(msg('backup.doc.no_migration', { version: d.version, from: v }), {
        version: msg('backup.doc.field.version_unsupported', { version: d.version }),
      });
  const h = encryptionHeader.safeParse(d.encryption);
  if (!h.success) throw bad(msg('backup.doc.no_header'), Object.fromEntries(h.error.issues.map((i) => [['encryption', ...i.path].join('.'), issueMessage(i)])));
  const key = await PassphraseKey.open(o.passphrase, h.data);
  const { integrity, ...body } = d;
  const mac = integrity && typeof integrity === 'object' ? (integrity as Record<string, unknown>).hmac : undefined;
  if (!key.verify(canonicalJson(body), mac)) throw bad(msg('backup.doc.integrity'), { integrity: msg('backup.doc.field.integrity') });

  // migrate
  let state = { sections: (d.sections ?? {}) as Record<string, unknown>, files: (d.files ?? {}) as Record<string, unknown> };
  if (typeof state.sections !== 'object' || Array.isArray(state.sections))
    throw bad(msg('backup.doc.sections_object'), { sections: msg('backup.doc.field.must_be_object') });
  for (let v = d.version; v < current; v++) state = migrations[v](state);

  // validate every section and row
  const fields: FieldMessages = {};
  const add = (k: string, m: Msg) => {
    if (Object.keys(fields).length < 50) fields[k] = m;
  };
  const sections: Record<string, Row[]> = {};
  for (const name of Object.keys(state.sections)) if (!SECTIONS.some((s) => s.name === name)) add(`sections.${name}`, msg('backup.doc.field.unknown_section'));
  for (const s of SECTIONS) {
    const rows = state.sections[s.name];
    if (!Array.isArray(rows)) {
      add(`sections.${s.name}`, rows === undefined ? msg('backup.doc.field.missing') : msg('backup.doc.field.must_be_array'));
      continue;
    }
    const cols = columnsOf(s, o.db);
    const seen = new Set<string>();
    sections[s.name] = [];
    rows.forEach((raw, i) => {
      const at = `sections.${s.name}.${i}`;
      if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return add(at, msg('backup.doc.field.must_be_object'));
      const r = raw as Row;
      for (const k of Object.keys(r)) if (!cols.some((c) => c.name === k)) add(`${at}.${k}`, msg('backup.doc.field.unknown_column'));
      for (const c of cols) {
        const v = r[c.name];
        if (v === undefined) add(`${at}.${c.name}`, msg('backup.doc.field.missing'));
        else if (v === null) {
          if (!c.nullable) add(`${at}.${c.name}`, msg('backup.doc.field.not_null'));
        } else if (c.type === 'bool' && typeof v !== 'boolean') add(`${at}.${c.name}`, msg('backup.doc.field.boolean'));
        else if (c.type === 'int' && !Number.isSafeInteger(v)) add(`${at}.${c.name}`, msg('backup.doc.field.integer'));
        else if (c.type === 'num' && (typeof v !== 'number' || !Number.isFinite(v))) add(`${at}.${c.name}`, msg('backup.doc.field.number'));
        else if (c.type === 'text' && typeof v !== 'string') add(`${at}.${c.name}`, msg('backup.doc.field.string'));
      }
      const pk = String(r[s.pk]);
      if (seen.has(pk)) add(`${at}.${s.pk}`, msg('backup.doc.field.twice'));
      seen.add(pk);
      // open the secrets
      const row: Row = { ...r };
      for (const [col, _kind] of Object.entries(s.secrets ?? {})) {
        if (typeof row[col] !== 'string') continue;
        try {
          row[col] = key.open(row[col] as string, `${s.name}.${col}`);
        } catch {
          add(`${at}.${col}`, msg('backup.doc.field.sealed_damaged'));
        }
      }
      let out = row;
      if (s.rowSecrets) {
        try {
          out = s.rowSecrets.in(row, (_k, v) => key.open(v, `${s.name}.${String(row[s.pk])}`));
        } catch {
          add(`${at}.value`, msg('backup.doc.field.sealed_damaged'));
        }
      }
      sections[s.name].push(out);
    });
  }
  if (Object.keys(fields).length) throw bad(msg('backup.doc.does_not_fit'), fields);

  // references between sections and the branding files
  const ids = new Map(SECTIONS.map((s) => [s.name, new Set((sections[s.name] ?? []).map((r) => String(r[s.pk])))]));
  const files: Record<string, Buffer> = {};
  const rawFiles = state.files && typeof state.files === 'object' ? (state.files as Record<string, unknown>) : {};
  for (const s of SECTIONS) {
    (sections[s.name] ?? []).forEach((r, i) => {
      for (const [col, ref] of Object.entries(s.refs ?? {})) {
        const v = r[col];
        if (v === null) continue;
        const list = refIds(ref, v);
        if (!list) {
          add(`sections.${s.name}.${i}.${col}`, msg('backup.doc.field.id_list'));
          continue;
        }
        for (const x of list)
          if (!ref.loose && !ids.get(ref.section)!.has(String(x)))
            add(`sections.${s.name}.${i}.${col}`, msg('backup.doc.field.dangling_ref', { section: ref.section, id: String(x) }));
      }
      for (const col of s.files ?? []) {
        const name = r[col];
        if (name === null) continue;
        const data = rawFiles[String(name)];
        if (typeof data !== 'string') {
          add(`sections.${s.name}.${i}.${col}`, msg('backup.doc.field.no_such_file'));
          continue;
        }
        const buf = Buffer.from(data, 'base64');
        if (!buf.length || buf.length > BRANDING_MAX_BYTES || !sniffImage(buf))
          add(`files.${String(name)}`, msg('backup.doc.field.image', { max_bytes: BRANDING_MAX_BYTES }));
        else files[String(name)] = buf;
      }
    });
  }
  if (Object.keys(fields).length) throw bad(msg('backup.doc.does_not_fit'), fields);
  return { version: current, migrated_from: d.version === current ? null : d.version, created_at: String(d.created_at ?? ''), sections, files };
}

/** Seals a document body the way makeDocument does (tests build older or damaged documents with it). */
export async function resealDocument(
  doc: Omit<BackupDocument, 'integrity' | 'encryption'>,
  passphrase: string,
  encryption: EncryptionHeader,
): Promise<BackupDocument> {
  const key = await PassphraseKey.open(passphrase, encryption);
  const { integrity: _i, encryption: _e, ...rest } = doc as BackupDocument;
  const body = { ...rest, encryption };
  return { ...body, integrity: { alg: 'hmac-sha256', hmac: key.hmac(canonicalJson(body)) } } as BackupDocument;
}
