/** Injectable clock: epoch milliseconds. Tests pass a controllable one. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();

export function manualClock(start = Date.UTC(2026, 0, 1)): Clock & { advance(ms: number): void; set(ms: number): void } {
  let now = start;
  const c = (() => now) as Clock & { advance(ms: number): void; set(ms: number): void };
  c.advance = (ms: number) => { now += ms; };
  c.set = (ms: number) => { now = ms; };
  return c;
}
