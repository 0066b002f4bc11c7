// Operator commands: npm run cli -- <command> [args]
//   unlock-account <username> [--route-auth]   lift a login lockout
//   reset-admin-password <username>            print a new random password (to be changed at the next sign-in)
//   reset-second-factor <username>             remove the user's TOTP, passkeys and recovery codes (the way back in)
//   rotate-master-key                          new master key, every sealed secret re-sealed (the sidecar must be stopped)
//   keepalived-config                          print this node's keepalived.conf (GATEHOUSE_VRRP_*; no database needed)
//   vrrp-state                                 print this node's VRRP state as JSON (master|backup|unknown and why)
import { msg } from '@gatehouse/common/messages/index.js';
import { loadConfig } from './config.js';
import { createLogger } from './util/logger.js';
import { acquireDataDirLock, DataDirLocked } from './masterkey/lock.js';
import { readVrrpStatus, renderKeepalivedConfig, VrrpConfigError } from './cluster/vrrp.js';

// The database commands load the whole application; the VRRP commands (no database) do not wait for it.
const app = async () => {
  const [{ createAppContext, createDeps }, { featureModels }, { findRow }] = await Promise.all([
    import('./app-context.js'),
    import('./features.js'),
    import('./db/define.js'),
  ]);
  return { createAppContext, createDeps, featureModels, findRow };
};

/** keepalived-config: the node's keepalived.conf from its GATEHOUSE_VRRP_* variables. */
function keepalivedConfig(): number {
  const { vrrp, cluster } = loadConfig();
  if (!vrrp.address || !vrrp.iface) {
    process.stderr.write('keepalived-config needs GATEHOUSE_VRRP_ADDRESS (the floating address with its prefix) and GATEHOUSE_VRRP_INTERFACE\n');
    return 2;
  }
  try {
    process.stdout.write(
      renderKeepalivedConfig({
        nodeName: cluster.nodeName,
        iface: vrrp.iface,
        routerId: vrrp.routerId,
        priority: vrrp.priority,
        address: vrrp.address,
        peers: vrrp.peers,
        stateFile: vrrp.stateFile,
      }),
    );
    return 0;
  } catch (err) {
    if (!(err instanceof VrrpConfigError)) throw err;
    process.stderr.write(`keepalived-config: ${err.message}\n`);
    return 2;
  }
}

/** vrrp-state: this node's VRRP role (one JSON line). */
function vrrpState(): number {
  const { vrrp } = loadConfig();
  process.stdout.write(JSON.stringify(readVrrpStatus({ stateFile: vrrp.stateFile, address: vrrp.address, pidFile: vrrp.pidFile })) + '\n');
  return 0;
}

/** rotate-master-key: with the sidecar stopped (it holds the key in memory), under the data directory's lock. */
async function rotateMasterKey(): Promise<number> {
  const config = loadConfig();
  let release: () => void;
  try {
    release = acquireDataDirLock(config.dataDir, 'rotate-master-key');
  } catch (err) {
    if (!(err instanceof DataDirLocked)) throw err;
    process.stderr.write(
      err.holder.role === 'sidecar'
        ? `The sidecar is running (pid ${err.holder.pid}, ${err.file}): it holds the master key in memory and would go on sealing with the old one.\nStop it (e.g. systemctl stop gatehouse, docker compose stop gatehouse), run rotate-master-key again, then start it.\n(A sidecar that died without stopping leaves the file; it counts as gone once it is 20 s old.)\n`
        : `A master-key rotation is already running (pid ${err.holder.pid}, ${err.file}).\n`,
    );
    return 1;
  }
  try {
    const { createAppContext, featureModels } = await app();
    const ctx = await createAppContext(config, { models: featureModels, log: createLogger('warn', true) });
    try {
      const r = await ctx.masterKeyRotation.rotate({ source: 'cli' });
      await ctx.webhookQueue.flushed(); // the event's webhook deliveries are written (the sidecar sends them)
      const per = Object.entries(r.tables)
        .filter(([, n]) => n > 0)
        .map(([t, n]) => `${t} ${n}`)
        .join(', ');
      process.stdout.write(
        `master key rotated: ${r.sealed_values} sealed values re-sealed${per ? ` (${per})` : ''} in ${r.duration_ms} ms; hooks run: ${r.hooks.join(', ') || 'none'}\n${config.masterKeyFile} holds the new key. Admin sessions end: sign in again after starting the sidecar.\n`,
      );
      return 0;
    } catch (err) {
      process.stderr.write(`master key rotation failed: ${(err as Error).message}\nThe data opens with ${config.masterKeyFile} as it is now.\n`);
      return 1;
    } finally {
      await ctx.db.close();
    }
  } finally {
    release();
  }
}

async function main(argv: string[]): Promise<number> {
  const [cmd, ...args] = argv;
  const usage =
    'usage: gatehouse-cli unlock-account <username> [--route-auth] | reset-admin-password <username> | reset-second-factor <username> | rotate-master-key | keepalived-config | vrrp-state\n(from a checkout: npm run cli -- <command>)';
  if (!cmd) {
    process.stderr.write(usage + '\n');
    return 2;
  }
  if (cmd === 'rotate-master-key') return rotateMasterKey();
  if (cmd === 'keepalived-config') return keepalivedConfig();
  if (cmd === 'vrrp-state') return vrrpState();
  const { createDeps, featureModels, findRow } = await app();
  const deps = await createDeps(loadConfig(), { models: featureModels, log: createLogger('error', true) });
  try {
    switch (cmd) {
      case 'unlock-account': {
        const name = args.find((a) => !a.startsWith('--'));
        if (!name) {
          process.stderr.write(usage + '\n');
          return 2;
        }
        const type = args.includes('--route-auth') ? 'route_auth' : 'admin';
        const was = await deps.lockout.unlock(type, name);
        await deps.activity.record({
          source: 'cli',
          event_type: 'account_unlocked',
          msg: msg('auth.unlocked_cli', { username: name }),
          details: { record_type: type, was_locked: was },
        });
        process.stdout.write(was ? `unlocked ${name}\n` : `${name} was not locked (failure counter reset)\n`);
        return 0;
      }
      case 'reset-admin-password': {
        const name = args[0];
        const row = name ? await findRow(deps.db.models.User, { where: { username: name } }) : null;
        if (!row) {
          process.stderr.write(`no such user: ${name ?? ''}\n`);
          return 1;
        }
        // The printed password is a one-off: the next sign-in asks for a new one.
        const pw = await deps.users.resetPassword(row.id, undefined);
        process.stdout.write(`new password for ${name}: ${pw}\n`);
        return 0;
      }
      case 'reset-second-factor': {
        const name = args[0];
        const row = name ? await findRow(deps.db.models.User, { where: { username: name } }) : null;
        if (!row) {
          process.stderr.write(`no such user: ${name ?? ''}\n`);
          return 1;
        }
        const had = await deps.secondFactor.reset(row, null);
        process.stdout.write(
          had
            ? `second factor of ${name} removed: the next sign-in needs the password only${(await deps.secondFactor.required()) ? ', then sets up a new TOTP (the policy requires one)' : ''}\n`
            : `${name} had no second factor\n`,
        );
        return 0;
      }
      default:
        process.stderr.write(`unknown command ${cmd}\n${usage}\n`);
        return 2;
    }
  } finally {
    await deps.db.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${err?.stack ?? err}\n`);
    process.exit(1);
  },
);
