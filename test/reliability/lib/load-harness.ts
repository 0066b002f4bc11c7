// Shared by the reliability suite's load cases (test/reliability/load-*.test.ts): the machine's
// load average, resident memory of a process, percentiles, a fixed-rate run of Debian's `hey`
// (parsed summary), and a visitor signing in on a route-auth route through Caddy's login form.
// The sidecars themselves come from the benchmarks' helpers (scripts/bench/lib.ts startBenchSidecar,
// scripts/bench/list-data.ts startListBench).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { Browser, rawRequest } from '../../../sidecar/test/route-auth-helpers.js';

/** "1.23 0.98 0.80 (2 cores)": /proc/loadavg's three averages. */
export function loadAverage(): string {
  return fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

/** Resident memory of a process in MB: now (VmRSS) and its peak (VmHWM). */
export function memoryOf(pid: number): { rssMb: number; peakMb: number } {
  const st = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(st)?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

/** CPU seconds (user + system) a process used so far, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  const fields = fs
    .readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  // after "pid (comm) ": state is field 0, utime field 11, stime field 12 (clock ticks, 100 per second)
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The p-th percentile (0–100) of the values, nearest rank. */
export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const a = [...values].sort((x, y) => x - y);
  return a[Math.min(a.length - 1, Math.max(0, Math.ceil((p / 100) * a.length) - 1))];
}

export const fmtMs = (v: number) => `${v < 10 ? v.toFixed(2) : v.toFixed(1)} ms`;

export interface HeyResult {
  /** every request that got an answer or an error */
  total: number;
  /** the achieved rate over the whole run (hey's Requests/sec) */
  rps: number;
  /** seconds hey ran */
  seconds: number;
  /** milliseconds (hey's latency distribution, 0.1 ms resolution) */
  p50: number;
  p90: number;
  p99: number;
  slowest: number;
  /** status code → count */
  statuses: Record<string, number>;
  /** error text → count (socket errors, timeouts) */
  errors: Record<string, number>;
  raw: string;
}

/** hey's summary output → figures. */
export function parseHey(out: string): HeyResult {
  const sec = (re: RegExp) => Number(re.exec(out)?.[1] ?? NaN) * 1000;
  const statuses: Record<string, number> = {};
  const statusBlock = /Status code distribution:\n([\s\S]*?)(?:\n\n|$)/.exec(out)?.[1] ?? '';
  for (const m of statusBlock.matchAll(/\[(\d+)\]\s+(\d+) responses/g)) statuses[m[1]] = Number(m[2]);
  const errors: Record<string, number> = {};
  const errorBlock = /Error distribution:\n([\s\S]*?)(?:\n\n|$)/.exec(out)?.[1] ?? '';
  for (const m of errorBlock.matchAll(/\[(\d+)\]\s+(.+)/g)) errors[m[2].trim()] = Number(m[1]);
  const answered = Object.values(statuses).reduce((a, b) => a + b, 0);
  const failed = Object.values(errors).reduce((a, b) => a + b, 0);
  return {
    total: answered + failed,
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN),
    seconds: Number(/Total:\s+([\d.]+) secs/.exec(out)?.[1] ?? NaN),
    p50: sec(/50%+ in ([\d.]+) secs/),
    p90: sec(/90%+ in ([\d.]+) secs/),
    p99: sec(/99%+ in ([\d.]+) secs/),
    slowest: sec(/Slowest:\s+([\d.]+) secs/),
    statuses,
    errors,
    raw: out,
  };
}

/**
 * A fixed-rate run of `hey`: `workers` workers each sending at most `perWorker` requests/s (hey -q
 * is per worker, paced by a ticker, so the total is workers × perWorker when answers keep up) for
 * `seconds`, redirects not followed (a 302 to the login page must count as a failure, not as the
 * login page's 200).
 */
export function hey(
  url: string,
  o: { workers: number; perWorker: number; seconds: number; headers: Record<string, string>; host?: string },
): Promise<HeyResult> {
  const args = ['-z', `${o.seconds}s`, '-c', String(o.workers), '-q', String(o.perWorker), '-t', '10', '-disable-redirects', '-disable-compression'];
  for (const [k, v] of Object.entries(o.headers)) args.push('-H', `${k}: ${v}`);
  if (o.host) args.push('-host', o.host);
  args.push(url);
  return new Promise((resolve, reject) => {
    execFile('hey', args, { maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? reject(new Error(`hey: ${err.message}\n${stderr}`)) : resolve(parseHey(stdout)),
    );
  });
}

/**
 * A visitor signs in on a route-auth route (method email_password) through Caddy: the protected
 * page answers 302 to the login page, the login page sets the CSRF cookie, the form is posted →
 * 303 and the session cookie. Returns the Cookie header a browser would send from then on.
 */
export async function signInThroughCaddy(caddyPort: number, host: string, email: string, password: string): Promise<string> {
  const jar = new Map<string, string>();
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const keep = (r: { headers: Record<string, string | string[] | undefined> }) => {
    for (const line of (r.headers['set-cookie'] as string[] | undefined) ?? []) {
      const pair = line.split(';')[0];
      const [k, v] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
      if (v && !/max-age=0/i.test(line)) jar.set(k, v);
      else jar.delete(k);
    }
  };
  const first = await rawRequest(caddyPort, 'GET', '/', { host });
  if (first.status !== 302) throw new Error(`the protected route answered ${first.status} without a session, expected 302`);
  const loc = new URL(first.headers.location!);
  const page = await rawRequest(caddyPort, 'GET', `${loc.pathname}${loc.search}`, { host });
  if (page.status !== 200) throw new Error(`login page: ${page.status}`);
  keep(page);
  const form = new URLSearchParams({ _csrf: Browser.csrf(page.body), rd: loc.searchParams.get('rd') ?? '/', step: 'password', email, password }).toString();
  const post = await rawRequest(caddyPort, 'POST', '/route-auth/login', { host, cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' }, form);
  if (post.status !== 303) throw new Error(`login: ${post.status} ${post.body.slice(0, 300)}`);
  keep(post);
  return [...jar]
    .filter(([k]) => /^gh_ra_\d+$/.test(k))
    .map(([k, v]) => `${k}=${v}`)
    .join('; ');
}
