// Polling for tests: the one waitFor of every test (sidecar, gateway, client, browser, end-to-end,
// reliability, security and container tests) and of the benchmarks. Tests wait for a condition with
// it; a raw sleep elsewhere in a test needs `// not a condition: <why>` (lint rule
// gatehouse/test-waits, scripts/eslint/test-waits.js).

/**
 * Polls predicate until it returns a truthy value (returned) or the time is up (throws, naming
 * `what` and the predicate's last error: a predicate that throws is tried again until then).
 * The third argument is `what` or { what, intervalMs } (default 50 ms).
 */
export async function waitFor<T>(
  predicate: () => T | Promise<T>,
  timeoutMs = 10_000,
  opts: string | { intervalMs?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  const o = typeof opts === 'string' ? { what: opts } : opts;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await predicate();
      if (v) return v as NonNullable<T>;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() >= deadline) {
      const why = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${o.what ?? 'condition'}${why}`);
    }
    await new Promise((r) => setTimeout(r, o.intervalMs ?? 50));
  }
}
