// Operator commands: npm run cli -- <command> [args]
//   unlock-account <username> [--route-auth]   lift a login lockout
//   reset-admin-password <username>            print a new random password (to be changed at the next sign-in)
import { loadConfig } from './config.js';
import { createDeps } from './app-context.js';
import { createLogger } from './util/logger.js';

async function main(argv: string[]): Promise<number> {
  const [cmd, ...args] = argv;
  const usage = 'usage: npm run cli -- unlock-account <username> [--route-auth] | reset-admin-password <username>';
  if (!cmd) {
    process.stderr.write(usage + '\n');
    return 2;
  }
  const deps = await createDeps(loadConfig(), { log: createLogger('error', true) });
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
        await deps.activity.record({ source: 'cli', event_type: 'account_unlocked', message: `Account ${name} unlocked from the CLI`, details: { record_type: type, was_locked: was } });
        process.stdout.write(was ? `unlocked ${name}\n` : `${name} was not locked (failure counter reset)\n`);
        return 0;
      }
      case 'reset-admin-password': {
        const name = args[0];
        const row = name ? await deps.db.models.User.findOne({ where: { username: name }, raw: true }) : null;
        if (!row) {
          process.stderr.write(`no such user: ${name ?? ''}\n`);
          return 1;
        }
        // The printed password is a one-off: the next sign-in asks for a new one.
        const pw = await deps.users.resetPassword((row as any).id, undefined);
        process.stdout.write(`new password for ${name}: ${pw}\n`);
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

main(process.argv.slice(2)).then((code) => process.exit(code), (err) => {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exit(1);
});
