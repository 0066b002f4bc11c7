// Sending Wake-on-LAN magic packets over UDP (Node only): the sidecar's direct WoL for RDP routes and
// the gateway companion's WoL on its LAN share this one sender.
import dgram from 'node:dgram';
import net from 'node:net';
import { magicPacket } from './gateway-protocol.js';

/**
 * Sends `count` rounds of the magic packet for mac, one round to every destination, `spacingMs`
 * apart, from one socket with broadcast allowed (directed or limited broadcast addresses work).
 * The socket family is `family`, else that of the first destination. Returns the size of one packet in bytes.
 */
export async function sendMagicPackets(
  mac: string,
  destinations: string[],
  o: { port: number; count: number; spacingMs: number; family?: 'udp4' | 'udp6' },
): Promise<number> {
  const packet = magicPacket(mac);
  const sock = dgram.createSocket(o.family ?? (net.isIPv6(destinations[0] ?? '') ? 'udp6' : 'udp4'));
  try {
    await new Promise<void>((resolve, reject) => {
      sock.once('error', reject);
      sock.bind(0, () => {
        sock.off('error', reject);
        resolve();
      });
    });
    sock.setBroadcast(true);
    for (let i = 0; i < o.count; i++) {
      if (i) await new Promise((r) => setTimeout(r, o.spacingMs));
      for (const addr of destinations) {
        await new Promise<void>((resolve, reject) => sock.send(packet, o.port, addr, (err) => (err ? reject(err) : resolve())));
      }
    }
  } finally {
    sock.close();
  }
  return packet.length;
}
