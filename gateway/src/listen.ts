// Binds a server (the companion's API and its HTTP proxy) and resolves once it listens; a bind error
// (port in use, address not on this host) rejects instead of being thrown as an 'error' event.
import type { Server } from 'node:net';

export function listenOn(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
