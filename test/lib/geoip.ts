// Country databases for tests: a small MaxMind-format file (GeoLite2-Country layout) that maps test
// addresses (loopback, the namespaces' addresses) to countries, written by MaxMind's own writer
// (github.com/maxmind/mmdbwriter) through caddy-modules/geoip/cmd/gatehouse-test-mmdb.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const modules = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'caddy-modules');

export interface TestMmdbOptions {
  /** metadata database_type (default GeoLite2-Country) */
  type?: string;
  /** metadata build_epoch in Unix seconds (default now) */
  epoch?: number;
}

/** Writes `file`: each key a network (CIDR or one address), each value an ISO 3166-1 alpha-2 code. */
export async function writeTestMmdb(file: string, networks: Record<string, string>, opts: TestMmdbOptions = {}): Promise<void> {
  const args = ['run', './geoip/cmd/gatehouse-test-mmdb', '-o', path.resolve(file)];
  if (opts.type) args.push('-type', opts.type);
  if (opts.epoch) args.push('-epoch', String(opts.epoch));
  args.push(...Object.entries(networks).map(([n, cc]) => `${n}=${cc}`));
  await run('go', args, { cwd: modules, timeout: 300_000 });
}
