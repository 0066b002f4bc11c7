// The certificates Caddy holds for the routes' HTTPS names, for the route views (routes/service.ts):
// issuer, expiry and the last error per name.
//
// - Files: Caddy keeps them in its storage, which the supervisor puts under <dataDir>/caddy/data
//   (XDG_DATA_HOME): caddy/certificates/<issuer-dir>/<name>/<name>.crt, a wildcard name as
//   wildcard_.example.com; the internal CA's issuer directory is "local". They are read with
//   node:crypto's X509Certificate. The scan is cached: a read older than ttlMs rescans (once, however
//   many reads wait), and a "certificate obtained" log line makes the next read rescan.
//   In a cluster the same keys are rows of the shared PostgreSQL storage instead (fragments/storage.ts),
//   read by readStoredCertificates, so every node lists the certificates any node obtained.
// - Errors: Caddy logs a failed obtain as a JSON line (loggers tls.obtain, tls.issuance.acme…, with
//   the identifier and the error); the supervisor hands every JSON line to noteLog(), which keeps the
//   last error and its time per name and clears it when a certificate for the name is obtained.
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { QueryTypes } from 'sequelize';
import type { Database } from '../db/index.js';
import type { Clock } from '../util/clock.js';
import { CADDY_STORAGE_TABLE } from './fragments/storage.js';
import type { CertificateView } from '../routes/schema.js';

/** A certificate file as read from Caddy's storage. */
export interface CertificateFile {
  /** the name it is stored under (the directory name with wildcard_ turned back into *.) */
  name: string;
  /** Caddy's issuer directory: "local" for the internal CA, the ACME directory's host and path otherwise */
  issuerDir: string;
  /** the issuer's common name (or organization), from the certificate */
  issuer: string;
  /** issued by Caddy's internal CA (GATEHOUSE_TLS=internal) */
  internal: boolean;
  notBefore: number;
  notAfter: number;
  /** DNS names of the subject alternative names */
  names: string[];
}

/**
 * A certificate that ends within this is "expiring" (Caddy renews ACME certificates 30 days ahead),
 * or within a third of its lifetime when that is shorter (Caddy renews then).
 */
export const EXPIRING_MS = 14 * 86_400_000;
/** The issuer directory of Caddy's internal CA. */
export const INTERNAL_ISSUER_DIR = 'local';
/** How many names keep a last error (names clients make up never get one: only managed names are obtained). */
const MAX_ERRORS = 2000;

/** The directory name Caddy stores a name under (certmagic's StorageKeys.Safe for our names: lowercase, * → wildcard_). */
export function storageName(domain: string): string {
  return domain.toLowerCase().replace(/\*/g, 'wildcard_');
}

function dnField(dn: string, key: string): string | null {
  for (const line of dn.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0 && line.slice(0, eq).trim() === key) return line.slice(eq + 1).trim();
  }
  return null;
}

/** Parses one certificate file (PEM; the first certificate of a chain). null when it cannot be read as one. */
export function parseCertificate(pem: string | Buffer, name: string, issuerDir: string): CertificateFile | null {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(pem);
  } catch {
    return null;
  }
  const names = (cert.subjectAltName ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.startsWith('DNS:'))
    .map((s) => s.slice(4).toLowerCase());
  return {
    name,
    issuerDir,
    issuer: dnField(cert.issuer, 'CN') ?? dnField(cert.issuer, 'O') ?? cert.issuer.replace(/\n/g, ', '),
    internal: issuerDir === INTERNAL_ISSUER_DIR,
    notBefore: Date.parse(cert.validFrom),
    notAfter: Date.parse(cert.validTo),
    names,
  };
}

export interface CertificateStoreOptions {
  /** Caddy's storage root: <XDG_DATA_HOME>/caddy */
  storageDir: string;
  clock: Clock;
  /** which issuer the routes use now (the TLS mode of the network settings): its certificate wins when a name has files from both */
  tls: () => 'acme' | 'internal';
  /** a read older than this rescans the files (default 30 s) */
  ttlMs?: number;
  /** the certificates from the shared storage instead of the files (cluster: readStoredCertificates) */
  stored?: () => Promise<StoredCertificate[]>;
}

/** One certificate of Caddy's storage: certificates/<issuerDir>/<dir>/<dir>.crt. */
export interface StoredCertificate {
  issuerDir: string;
  dir: string;
  pem: Buffer;
}

/**
 * The certificates in the shared PostgreSQL storage (caddy-modules/pgstorage: the table Caddy's
 * module creates on its first start; none before that).
 */
export async function readStoredCertificates(db: Pick<Database, 'sequelize'>): Promise<StoredCertificate[]> {
  const [present] = (await db.sequelize.query(`SELECT to_regclass(:t) IS NOT NULL AS present`, {
    replacements: { t: CADDY_STORAGE_TABLE },
    type: QueryTypes.SELECT,
  })) as { present: boolean }[];
  if (!present?.present) return [];
  const rows = (await db.sequelize.query(`SELECT key, value FROM ${CADDY_STORAGE_TABLE} WHERE key LIKE 'certificates/%.crt'`, {
    type: QueryTypes.SELECT,
  })) as { key: string; value: Buffer }[];
  const out: StoredCertificate[] = [];
  for (const { key, value } of rows) {
    const parts = key.split('/');
    if (parts.length === 4 && parts[3] === `${parts[2]}.crt`) out.push({ issuerDir: parts[1], dir: parts[2], pem: value });
  }
  return out;
}

export class CertificateStore {
  private scanned: { at: number; byName: Map<string, CertificateFile> } | null = null;
  private scanning: Promise<Map<string, CertificateFile>> | null = null;
  private readonly errors = new Map<string, { error: string; at: number }>();
  private readonly ttlMs: number;

  constructor(private readonly o: CertificateStoreOptions) {
    this.ttlMs = o.ttlMs ?? 30_000;
  }

  /** The certificate files by name, from the cache when it is fresh. */
  async files(): Promise<Map<string, CertificateFile>> {
    if (this.scanned && this.o.clock() - this.scanned.at < this.ttlMs) return this.scanned.byName;
    if (!this.scanning) {
      this.scanning = this.scan()
        .then((byName) => {
          this.scanned = { at: this.o.clock(), byName };
          return byName;
        })
        .finally(() => {
          this.scanning = null;
        });
    }
    return this.scanning;
  }

  /** The next read rescans. */
  invalidate(): void {
    this.scanned = null;
  }

  private async scan(): Promise<Map<string, CertificateFile>> {
    const byName = new Map<string, CertificateFile>();
    for (const { issuerDir, dir, pem } of this.o.stored ? await this.o.stored() : await this.readFiles()) {
      const name = dir.replace(/^wildcard_\./, '*.');
      const cert = parseCertificate(pem, name, issuerDir);
      if (!cert) continue;
      const have = byName.get(name);
      if (!have || this.better(cert, have)) byName.set(name, cert);
    }
    return byName;
  }

  /** The certificate files under <storageDir>/certificates. */
  private async readFiles(): Promise<StoredCertificate[]> {
    const root = path.join(this.o.storageDir, 'certificates');
    const out: StoredCertificate[] = [];
    let issuers: string[];
    try {
      issuers = await fs.readdir(root);
    } catch {
      return out; // nothing obtained yet
    }
    for (const issuerDir of issuers) {
      let names: string[];
      try {
        names = await fs.readdir(path.join(root, issuerDir));
      } catch {
        continue;
      }
      for (const dir of names) {
        try {
          out.push({ issuerDir, dir, pem: await fs.readFile(path.join(root, issuerDir, dir, `${dir}.crt`)) });
        } catch {
          continue;
        }
      }
    }
    return out;
  }

  /** Of two certificates for one name: the current issuer's, then the one that lasts longer. */
  private better(a: CertificateFile, b: CertificateFile): boolean {
    const internalNow = this.o.tls() === 'internal';
    const current = (c: CertificateFile) => internalNow === c.internal;
    if (current(a) !== current(b)) return current(a);
    return a.notAfter > b.notAfter;
  }

  /**
   * One JSON log line of Caddy (the supervisor's forward()). A tls.* logger line with an error and
   * an identifier records the name's last error; "certificate obtained successfully" clears it and
   * makes the next read rescan the files.
   */
  noteLog(entry: Record<string, unknown>): void {
    const logger = typeof entry.logger === 'string' ? entry.logger : '';
    if (!logger.startsWith('tls')) return;
    const msg = typeof entry.msg === 'string' ? entry.msg : '';
    const ids = identifiers(entry);
    if (/certificate (obtained|renewed) successfully/i.test(msg)) {
      for (const id of ids) this.errors.delete(storageName(id));
      this.invalidate();
      return;
    }
    const error = typeof entry.error === 'string' ? entry.error : null;
    if (!error || (entry.level !== 'error' && entry.level !== 'warn')) return;
    const at = typeof entry.ts === 'number' ? Math.round(entry.ts * 1000) : this.o.clock();
    for (const id of ids) {
      const key = storageName(id);
      this.errors.delete(key);
      this.errors.set(key, { error: `${msg ? `${msg}: ` : ''}${error}`.slice(0, 1000), at });
      if (this.errors.size > MAX_ERRORS) this.errors.delete(this.errors.keys().next().value!);
    }
  }

  /** The certificate state of a name that Caddy serves over TLS. */
  async stateOf(domain: string): Promise<CertificateView> {
    const files = await this.files();
    const name = domain.toLowerCase();
    const cert = files.get(name);
    const err = this.errors.get(storageName(name)) ?? null;
    const now = this.o.clock();
    const base = {
      domain: name,
      last_error: err?.error ?? null,
      last_error_at: err ? new Date(err.at).toISOString() : null,
      custom: null,
    };
    if (!cert) return { ...base, state: err ? 'error' : 'pending', issuer: null, internal: this.o.tls() === 'internal', not_after: null };
    // Short-lived certificates (the internal CA's last 12 hours) count as expiring only once less
    // than a third of their lifetime is left, when Caddy should have renewed them.
    const soon = Math.min(EXPIRING_MS, (cert.notAfter - cert.notBefore) / 3);
    const state: CertificateView['state'] = cert.notAfter <= now ? 'expired' : cert.notAfter - now < soon ? 'expiring' : 'valid';
    return { ...base, state, issuer: cert.issuer, internal: cert.internal, not_after: new Date(cert.notAfter).toISOString() };
  }
}

/** The names a tls log line is about: identifier, identifiers, or the "[name] " an error begins with. */
function identifiers(entry: Record<string, unknown>): string[] {
  if (typeof entry.identifier === 'string') return [entry.identifier];
  if (Array.isArray(entry.identifiers)) return entry.identifiers.filter((x): x is string => typeof x === 'string');
  const m = typeof entry.error === 'string' ? /^\[([^\]\s]+)\]/.exec(entry.error) : null;
  return m ? [m[1]] : [];
}

/** A certificate state that needs no files: no TLS on this route (HTTP-only, L4 without TLS or passing it through). */
export const NOT_APPLICABLE: CertificateView = {
  state: 'not_applicable',
  domain: null,
  issuer: null,
  internal: false,
  not_after: null,
  last_error: null,
  last_error_at: null,
  custom: null,
};
