// A free loopback port for a test server to listen on (the kernel picks it; closed again at once).
import dgram from 'node:dgram';
import net from 'node:net';

export async function freePort(kind: 'tcp' | 'udp'): Promise<number> {
  if (kind === 'udp') {
    const sock = dgram.createSocket('udp4');
    await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
    const port = sock.address().port;
    await new Promise<void>((r) => sock.close(() => r()));
    return port;
  }
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}
