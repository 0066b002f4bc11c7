// A timer loop with back-off, used by the gateway companion and the desktop client for their calls
// to the server: run(), then again after `interval` (or, after errors, interval × 2^errors capped at
// maxBackoffMs, ±10 % jitter); kick() runs it at once (or right after the current run).
import type { Logger } from './json-log.js';

export class Loop {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private again = false;
  private stopped = true;
  errors = 0;

  constructor(
    private readonly name: string,
    private readonly fn: () => Promise<void>,
    private readonly intervalMs: number,
    private readonly maxBackoffMs: number,
    private readonly log: Logger,
  ) {}

  start(delayMs = 0): void {
    this.stopped = false;
    this.schedule(delayMs);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.schedule(0);
  }

  /** The delay after `errors` consecutive failures. */
  static backoff(intervalMs: number, errors: number, maxMs: number): number {
    if (errors <= 0) return intervalMs;
    const d = Math.min(maxMs, intervalMs * 2 ** Math.min(errors, 20));
    return Math.round(d * (0.9 + Math.random() * 0.2));
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
  }

  private async tick(): Promise<void> {
    this.timer = null;
    if (this.stopped) return;
    this.running = true;
    try {
      await this.fn();
      this.errors = 0;
    } catch (err) {
      this.errors++;
      this.log.debug(`${this.name} failed`, { err: err instanceof Error ? err.message : String(err), errors: this.errors });
    } finally {
      this.running = false;
    }
    if (this.stopped) return;
    if (this.again) {
      this.again = false;
      this.schedule(0);
    } else {
      this.schedule(Loop.backoff(this.intervalMs, this.errors, this.maxBackoffMs));
    }
  }
}
