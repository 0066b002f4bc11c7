// GET /api/v1/system/resources: CPU, memory, uptime and disk of the host the sidecar
// runs on, exactly in the API's shape:
//   cpu {cores, percent, model}, memory {total, used, percent},
//   uptime {seconds, days, hours, minutes, formatted, bootTime}, disk {total, free, used, available, reserved},
//   gatehouse_uptime {seconds, days, hours, minutes, formatted, startTime}
// Bytes for memory and disk; percent 0-100 with one decimal. cpu.percent is the busy share of all
// cores between this call and the previous one (at least 200 ms apart: the first call, or one that
// comes sooner, measures 200 ms itself). memory.used = total - available (os.freemem is
// MemAvailable on Linux: page cache counts as free). uptime is the host's (os.uptime), bootTime its
// ISO time; gatehouse_uptime is this process's (process.uptime), startTime its ISO time. disk is the
// filesystem holding the data directory (statfs): free = available = what an unprivileged process may
// still write (f_bavail), used = total - all free blocks (f_bfree), reserved = the free blocks kept
// for root (f_bfree - f_bavail), so used + available + reserved = total.
import fs from 'node:fs';
import os from 'node:os';
import type { z } from 'zod';
import type { resourcesResponse } from './schema.js';
import type { Clock } from '../util/clock.js';

export type Resources = Omit<z.infer<typeof resourcesResponse>, 'ok'>;

interface CpuSample {
  at: number;
  idle: number;
  total: number;
}

function cpuSample(): CpuSample {
  let idle = 0;
  let total = 0;
  for (const c of os.cpus()) {
    const t = c.times;
    idle += t.idle;
    total += t.user + t.nice + t.sys + t.idle + t.irq;
  }
  return { at: performance.now(), idle, total };
}

const MIN_SAMPLE_MS = 200;
const round1 = (n: number) => Math.round(n * 10) / 10;

/** "3d 4h 12m" (days only when there are any; minutes always). */
export function formatUptime(seconds: number): { days: number; hours: number; minutes: number; formatted: string } {
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const formatted = days > 0 ? `${days}d ${hours}h ${minutes}m` : hours > 0 ? `${hours}h ${minutes}m` : `${minutes}m`;
  return { days, hours, minutes, formatted };
}

export class SystemResources {
  private last: CpuSample | null = null;

  constructor(private readonly o: { clock: Clock; dataDir: string; sleep?: (ms: number) => Promise<void> }) {}

  private async cpuPercent(): Promise<number> {
    let prev = this.last;
    if (!prev || performance.now() - prev.at < MIN_SAMPLE_MS) {
      prev = cpuSample();
      await (this.o.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))))(MIN_SAMPLE_MS);
    }
    const cur = cpuSample();
    this.last = cur;
    const total = cur.total - prev.total;
    const idle = cur.idle - prev.idle;
    return total > 0 ? round1(Math.min(100, Math.max(0, ((total - idle) / total) * 100))) : 0;
  }

  async read(): Promise<Resources> {
    const cpus = os.cpus();
    const percent = await this.cpuPercent();
    const memTotal = os.totalmem();
    const memUsed = memTotal - os.freemem();
    const seconds = Math.floor(os.uptime());
    const own = Math.floor(process.uptime());
    const st = await fs.promises.statfs(this.o.dataDir);
    const bsize = Number(st.bsize);
    const diskTotal = Number(st.blocks) * bsize;
    const available = Number(st.bavail) * bsize;
    const allFree = Number(st.bfree) * bsize;
    return {
      cpu: { cores: cpus.length, percent, model: (cpus[0]?.model ?? 'unknown').trim() },
      memory: { total: memTotal, used: memUsed, percent: memTotal > 0 ? round1((memUsed / memTotal) * 100) : 0 },
      uptime: { seconds, ...formatUptime(seconds), bootTime: new Date(this.o.clock() - seconds * 1000).toISOString() },
      gatehouse_uptime: { seconds: own, ...formatUptime(own), startTime: new Date(this.o.clock() - own * 1000).toISOString() },
      disk: { total: diskTotal, free: available, used: diskTotal - allFree, available, reserved: allFree - available },
    };
  }
}
