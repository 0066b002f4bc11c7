// Composition root: read config, start everything, stop on SIGTERM/SIGINT.
import { ConfigError, deprecatedVariablesIn, loadConfig } from './config.js';
import { startServer, type Running } from './server.js';
import { ClusterRefused } from './cluster/service.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`gatehouse: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  for (const d of deprecatedVariablesIn()) process.stderr.write(`gatehouse: ${d.name} is deprecated and still read; rename it to ${d.use}\n`);
  // The handlers are installed before the server starts: a signal that arrives while the features
  // start (the HTTP server already answers then) is kept and acted on once startServer() returns,
  // instead of node's default (killed, no graceful close).
  const state: { running?: Running; pending?: string } = {};
  let stopping = false;
  const stop = async (signal: string) => {
    const { running } = state;
    if (!running) {
      state.pending ??= signal;
      return;
    }
    if (stopping) return;
    stopping = true;
    running.deps.log.info(`${signal}: shutting down`);
    try {
      await running.close();
      process.exit(0);
    } catch (err) {
      running.deps.log.error('shutdown failed', { err: String(err) });
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  const running = (state.running = await startServer(config));
  running.deps.log.info(`gatehouse listening on http://${config.bind}:${running.port}`, { dataDir: config.dataDir, database: running.deps.db.dialect });
  if (state.pending) await stop(state.pending);
}

main().catch((err) => {
  if (err instanceof ClusterRefused) {
    process.stderr.write(`gatehouse: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`gatehouse: fatal: ${err?.stack ?? err}\n`);
  process.exit(1);
});
