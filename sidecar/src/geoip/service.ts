// The country database of the routes' country filters (GATEHOUSE_GEOIP_DB): whether it is there and
// what it is (metadata read with mmdb-lib). Caddy's gatehouse_geo matchers (caddy-modules/geoip)
// read the file themselves; the sidecar only checks it and shows it. status() is synchronous and
// cheap: the file is parsed again only when its size or modification time changed.
import fs from 'node:fs';
import { Reader } from 'mmdb-lib';
import type { GeoipStatus } from './schema.js';

type FileStatus = Omit<GeoipStatus, 'routes_with_filter'>;

const EMPTY = {
  present: false,
  database_type: null,
  source: null,
  description: null,
  built_at: null,
  ip_version: null,
  size_bytes: null,
  modified_at: null,
} as const;

/** MaxMind (GeoLite2-*, GeoIP2-*), DB-IP (DBIP-*, dbip-*), or another maker, by the database type. */
export function sourceOf(databaseType: string): 'maxmind' | 'dbip' | 'other' {
  if (/^(GeoLite2|GeoIP2|GeoIP)-/i.test(databaseType)) return 'maxmind';
  if (/^dbip/i.test(databaseType)) return 'dbip';
  return 'other';
}

export class GeoipService {
  private cache: { key: string; status: FileStatus } | null = null;

  constructor(private readonly file: string | undefined) {}

  /** The configured file's path, or undefined. */
  get path(): string | undefined {
    return this.file;
  }

  status(): FileStatus {
    if (!this.file) return { configured: false, path: null, error: null, ...EMPTY };
    let st: fs.Stats;
    try {
      st = fs.statSync(this.file);
    } catch (err) {
      this.cache = null;
      return { configured: true, path: this.file, error: `cannot read the file: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, ...EMPTY };
    }
    const key = `${st.size}:${st.mtimeMs}`;
    if (this.cache?.key === key) return this.cache.status;
    const base = { configured: true, path: this.file, size_bytes: st.size, modified_at: st.mtime.toISOString() };
    let status: FileStatus;
    try {
      if (!st.isFile()) throw new Error('not a regular file');
      const md = new Reader(fs.readFileSync(this.file)).metadata;
      // reason: mmdb-lib types description as a string; the format's metadata has a map by language ({en: "…"})
      const description = md.description as unknown as Record<string, string> | string | undefined;
      status = {
        ...EMPTY,
        ...base,
        present: true,
        database_type: md.databaseType ?? null,
        source: md.databaseType ? sourceOf(md.databaseType) : 'other',
        description: (typeof description === 'string' ? description : (description?.en ?? Object.values(description ?? {})[0])) ?? null,
        built_at: Number.isFinite(md.buildEpoch.getTime()) ? md.buildEpoch.toISOString() : null,
        ip_version: md.ipVersion ?? null,
        error: null,
      };
    } catch (err) {
      status = { ...EMPTY, ...base, error: `not a MaxMind-format database: ${(err as Error).message}` };
    }
    this.cache = { key, status };
    return status;
  }
}
