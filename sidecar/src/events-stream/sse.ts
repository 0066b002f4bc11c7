// The text/event-stream wire format (https://html.spec.whatwg.org/multipage/server-sent-events.html):
// pure functions, no I/O.

/** One message: `id:`, `event:` and one `data:` line per line of the JSON payload, then a blank line. */
export function sseMessage(m: { id?: string; event: string; data: unknown }): string {
  if (/[\r\n]/.test(m.event) || (m.id !== undefined && /[\r\n\0]/.test(m.id))) throw new Error('sseMessage: id and event must be single-line');
  const json = JSON.stringify(m.data);
  // JSON.stringify never emits a raw newline, but split anyway so any payload stays one message
  const data = json
    .split(/\r\n|\r|\n/)
    .map((l) => `data: ${l}\n`)
    .join('');
  return `${m.id !== undefined ? `id: ${m.id}\n` : ''}event: ${m.event}\n${data}\n`;
}

/** A comment line (ignored by EventSource; keeps proxies and idle timers from closing the connection). */
export function sseComment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;
}

/** How long (ms) EventSource waits before it reconnects. */
export function sseRetry(ms: number): string {
  return `retry: ${Math.max(0, Math.round(ms))}\n\n`;
}
