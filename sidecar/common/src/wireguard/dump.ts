// Parses `wg show <iface> dump` (pure). Tab-separated lines:
//   interface: private-key  public-key  listen-port  fwmark
//   each peer: public-key  preshared-key  endpoint  allowed-ips  latest-handshake  rx  tx  persistent-keepalive
// "(none)" marks an empty value, "off" a disabled fwmark or keepalive, latest-handshake is in epoch
// seconds (0 = never). `wg show all dump` output (one more leading column, the interface name) is
// accepted too when `iface` names which interface to read.
import type { WgDump, WgPeerStatus } from './types.js';

export class WgDumpParseError extends Error {}

function int(field: string, v: string, line: number): number {
  if (!/^\d+$/.test(v)) throw new WgDumpParseError(`wg dump line ${line}: ${field} "${v}" is not a number`);
  return Number(v);
}

function none(v: string): string | null {
  return v === '(none)' || v === '' ? null : v;
}

export function parseWgDump(text: string, iface?: string): WgDump {
  let rows = text
    .split('\n')
    .map((l) => l.replace(/\r$/, ''))
    .filter((l) => l.trim() !== '')
    .map((l) => l.split('\t'));
  // `wg show all dump`: keep the chosen interface's rows and drop the name column.
  if (rows.length && (rows[0].length === 5 || rows[0].length === 9)) {
    if (!iface) throw new WgDumpParseError('wg dump holds several interfaces: name the one to read');
    rows = rows.filter((r) => r[0] === iface).map((r) => r.slice(1));
    if (!rows.length) throw new WgDumpParseError(`wg dump has no interface ${iface}`);
  }
  if (!rows.length) throw new WgDumpParseError('wg dump is empty');
  const [head, ...peerRows] = rows;
  if (head.length !== 4) throw new WgDumpParseError(`wg dump line 1: expected 4 fields, got ${head.length}`);
  const fwmark = head[3] === 'off' ? null : int('fwmark', head[3].startsWith('0x') ? String(parseInt(head[3], 16)) : head[3], 1);
  const peers: WgPeerStatus[] = peerRows.map((r, i) => {
    const line = i + 2;
    if (r.length !== 8) throw new WgDumpParseError(`wg dump line ${line}: expected 8 fields, got ${r.length}`);
    const [publicKey, , endpoint, allowed, handshake, rx, tx, keepalive] = r;
    const allowedIps = none(allowed);
    return {
      publicKey,
      endpoint: none(endpoint),
      allowedIps: allowedIps
        ? allowedIps
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : [],
      latestHandshake: int('latest-handshake', handshake, line) * 1000,
      rx: int('rx', rx, line),
      tx: int('tx', tx, line),
      persistentKeepalive: keepalive === 'off' ? null : int('persistent-keepalive', keepalive, line),
    };
  });
  return {
    iface: { publicKey: none(head[1]) ?? '', listenPort: int('listen-port', head[2], 1), fwmark },
    peers,
  };
}
