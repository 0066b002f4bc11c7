// One request/answer exchange over a stream socket (TCP or a Unix socket): connect, write `msg`,
// collect the answer as text until `complete(answer)` holds. Resolves with the answer, or null when
// the connection fails, closes before the answer is complete, or `timeoutMs` passes. Used for
// wireguard-go's UAPI socket (wireguard/driver.ts) and by the tests' TCP echo checks.
import net from 'node:net';

export function socketExchange(target: net.NetConnectOpts, msg: string, complete: (answer: string) => boolean, timeoutMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    const sock = net.createConnection(target);
    let answer = '';
    const done = (v: string | null) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => done(null), timeoutMs);
    sock.setEncoding('utf8');
    sock.on('connect', () => sock.write(msg));
    sock.on('data', (d: string) => {
      answer += d;
      if (complete(answer)) done(answer);
    });
    sock.on('error', () => done(null));
    sock.on('close', () => done(complete(answer) ? answer : null));
  });
}
