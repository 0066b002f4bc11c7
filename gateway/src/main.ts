#!/usr/bin/env node
// gatehouse-gateway: the home-gateway companion.
//   gatehouse-gateway [--env <gateway.env>]
// The env file defaults to $GATEWAY_ENV_FILE, else /etc/gatehouse/gateway.env when it exists;
// variables of the process environment win over the file. Needs CAP_NET_ADMIN (root) for the tunnel.
import fs from 'node:fs';
import { Companion } from './companion.js';
import { EnvError, loadEnv } from './env.js';
import { createLogger } from '@gatehouse/common/json-log.js';

function envFileFromArgs(argv: string[]): string | null {
  const i = argv.findIndex((a) => a === '--env' || a === '-e');
  if (i >= 0) {
    if (!argv[i + 1]) throw new EnvError('--env needs a file name');
    return argv[i + 1];
  }
  const eq = argv.find((a) => a.startsWith('--env='));
  if (eq) return eq.slice(6);
  if (process.env.GATEWAY_ENV_FILE) return process.env.GATEWAY_ENV_FILE;
  return fs.existsSync('/etc/gatehouse/gateway.env') ? '/etc/gatehouse/gateway.env' : null;
}

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(
      'usage: gatehouse-gateway [--env <gateway.env>] [--health]\n  --health  exit 0 when the running companion answers on its API port (container health checks)\nSee gateway/README.md for every setting.\n',
    );
    return;
  }
  let env;
  try {
    env = loadEnv(envFileFromArgs(process.argv.slice(2)));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
  if (process.argv.includes('--health')) {
    const host = env.bind.includes(':') ? `[${env.bind}]` : env.bind;
    try {
      const res = await fetch(`http://${host}:${env.apiPort}/health`, { signal: AbortSignal.timeout(3000) });
      process.exit(res.status === 200 ? 0 : 1);
    } catch {
      process.exit(1);
    }
  }
  const log = createLogger(env.logLevel);
  const companion = new Companion(env, log);
  let stopping = false;
  const stop = async (sig: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`${sig}: stopping`);
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    await companion.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
  try {
    await companion.start();
  } catch (err) {
    log.error('start failed', { err: err instanceof Error ? err.message : String(err) });
    await companion.stop().catch(() => undefined);
    process.exit(1);
  }
}

void main();
