// IPv4 addresses as unsigned 32-bit integers and back. No imports: request schemas (and browsers)
// use parseIPv4 as well as the renderer.
const IPV4_RE = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** "10.8.0.2" → 168296450; null when not a dotted-quad IPv4 address. */
export function parseIPv4(text: string): number | null {
  const m = IPV4_RE.exec(text);
  if (!m) return null;
  const o = m.slice(1).map(Number);
  if (o.some((x, i) => x > 255 || (m[i + 1].length > 1 && m[i + 1].startsWith('0')))) return null;
  return ((o[0] << 24) >>> 0) + (o[1] << 16) + (o[2] << 8) + o[3];
}

export function formatIPv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}
