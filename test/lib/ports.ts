// Socket helpers shared by the sidecar, companion and end-to-end tests and the benchmarks (all on
// this host's own stack; for traffic inside a network namespace use netns.ts).
//   freePort(kind?, host?)                    a free port (the kernel picks it; closed again at once),
//                                             never one this process was handed before: the kernel may
//                                             hand a just-closed port out again before its first taker
//                                             binds it (two ports for one server colliding)
//   tcpRoundTrip(host, port, msg, timeoutMs?) connect, send msg, read until as many bytes came
//                                             back → the text, or null (refused, reset, timeout)
import dgram from 'node:dgram';
import net from 'node:net';
import { socketExchange } from '@gatehouse/common/socket.js';

const handedOut = new Set<string>();

export async function freePort(kind: 'tcp' | 'udp' = 'tcp', host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const port = await kernelFreePort(kind, host);
    // a TCP and a UDP port of the same number do not collide; two of one kind do
    const key = `${kind}/${port}`;
    if (!handedOut.has(key) || attempt >= 50) {
      handedOut.add(key);
      return port;
    }
  }
}

async function kernelFreePort(kind: 'tcp' | 'udp', host: string): Promise<number> {
  if (kind === 'udp') {
    const sock = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
    await new Promise<void>((r) => sock.bind(0, host, () => r()));
    const port = sock.address().port;
    await new Promise<void>((r) => sock.close(() => r()));
    return port;
  }
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, host, () => r()));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}

export function tcpRoundTrip(host: string, port: number, msg: string, timeoutMs = 3000): Promise<string | null> {
  return socketExchange({ host, port }, msg, (got) => got.length >= msg.length, timeoutMs);
}
