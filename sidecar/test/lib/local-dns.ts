// A DNS server on loopback for tests (check-dns): answers A queries from a table.
import dgram from 'node:dgram';

/** A minimal DNS server on loopback that answers A queries from a table (NXDOMAIN otherwise). */
export async function localDns(records: Record<string, string[]>): Promise<{ port: number; close(): void }> {
  const sock = dgram.createSocket('udp4');
  sock.on('message', (msg, rinfo) => {
    let off = 12;
    const labels: string[] = [];
    while (msg[off] !== 0) {
      labels.push(msg.subarray(off + 1, off + 1 + msg[off]).toString('latin1'));
      off += msg[off] + 1;
    }
    const question = msg.subarray(12, off + 5);
    const qtype = msg.readUInt16BE(off + 1);
    const ips = qtype === 1 ? (records[labels.join('.').toLowerCase()] ?? null) : [];
    const header = Buffer.alloc(12);
    msg.copy(header, 0, 0, 2);
    header.writeUInt16BE(0x8180 | (ips === null ? 3 : 0), 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(ips?.length ?? 0, 6);
    const answers = (ips ?? []).map((ip) => {
      const a = Buffer.alloc(16);
      a.writeUInt16BE(0xc00c, 0);
      a.writeUInt16BE(1, 2);
      a.writeUInt16BE(1, 4);
      a.writeUInt32BE(60, 6);
      a.writeUInt16BE(4, 10);
      ip.split('.').forEach((o, i) => a.writeUInt8(Number(o), 12 + i));
      return a;
    });
    sock.send(Buffer.concat([header, question, ...answers]), rinfo.port, rinfo.address);
  });
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
  return { port: sock.address().port, close: () => sock.close() };
}
