// Reachability of LAN targets: a TCP connect with a timeout (latency = time to the SYN-ACK), and for
// UDP targets an ICMP echo through the system's `ping` (UDP has no handshake to time).
import { execFile } from 'node:child_process';
import dns from 'node:dns';
import net from 'node:net';

export interface ProbeResult {
  reachable: boolean;
  latency_ms: number | null;
  error?: string;
}

const round = (ms: number) => Math.round(ms * 100) / 100;

export function tcpProbe(host: string, port: number, timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const sock = net.connect({ host, port });
    const done = (r: ProbeResult) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => done({ reachable: false, latency_ms: null, error: 'timeout' }), timeoutMs);
    sock.once('connect', () => done({ reachable: true, latency_ms: round(performance.now() - t0) }));
    sock.once('error', (err: NodeJS.ErrnoException) => done({ reachable: false, latency_ms: null, error: err.code ?? err.message }));
  });
}

export function pingProbe(host: string, timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const wait = String(Math.max(1, Math.ceil(timeoutMs / 1000)));
    execFile('ping', ['-n', '-c', '1', '-W', wait, host], { timeout: timeoutMs + 2000 }, (err, stdout) => {
      const m = /time[=<]([\d.]+)\s*ms/.exec(stdout ?? '');
      if (!err && m) resolve({ reachable: true, latency_ms: round(Number(m[1])) });
      else
        resolve({
          reachable: false,
          latency_ms: null,
          error: err ? ((err as NodeJS.ErrnoException).code === 'ENOENT' ? 'ping not installed' : 'no reply') : 'no reply',
        });
    });
  });
}

/** True when every name resolves (IP literals count as resolved). */
export async function resolveAll(names: string[], timeoutMs: number): Promise<boolean> {
  const todo = [...new Set(names.filter((n) => n && !net.isIP(n)))];
  const results = await Promise.all(
    todo.map((n) =>
      Promise.race([
        dns.promises.lookup(n).then(
          () => true,
          () => false,
        ),
        new Promise<boolean>((r) => setTimeout(() => r(false), timeoutMs).unref()),
      ]),
    ),
  );
  return results.every(Boolean);
}
