// Builds the services container from a config: database, clock, logger and the platform services.
// Feature services are added by features/index.ts.
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.js';
import type { Deps } from './deps.js';
import { openDatabase } from './db/index.js';
import { systemClock, systemTimers, type Clock, type Timers } from './util/clock.js';
import { Scheduler } from './util/scheduler.js';
import { EventBus, watchTables } from './events.js';
import { createLogger, type Logger } from './util/logger.js';
import { MasterKey } from './util/crypto.js';
import { ActivityLog } from './logs/activity.js';
import { SettingsStore } from './settings/store.js';
import { LockoutService } from './auth/lockout.js';
import { UsersService, generatePassword } from './users/service.js';
import { TokensService } from './tokens/service.js';
import { DbSessionStore } from './auth/session-store.js';

export interface ContextOptions {
  clock?: Clock;
  /** The timers periodic work runs on (default node's; tests may pass a manual clock's .timers). */
  timers?: Timers;
  log?: Logger;
  sqliteFile?: string;
}

export async function createDeps(config: Config, opts: ContextOptions = {}): Promise<Deps> {
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? createLogger(config.logLevel);
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const { key } = MasterKey.loadOrCreate(config.masterKeyFile);
  const db = await openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, sqliteFile: opts.sqliteFile });
  const { models } = db;
  const scheduler = new Scheduler({ log, clock, timers: opts.timers ?? systemTimers });
  const events = new EventBus({ clock, log });
  watchTables(events, { routes: models.Route, peers: models.Peer });
  const activity = new ActivityLog(models, clock, log, events);
  const settings = new SettingsStore(models, clock);
  const lockout = new LockoutService(models, settings, clock);
  const users = new UsersService(models, clock, lockout, activity, events);
  const tokens = new TokensService(models, clock, activity);
  const sessions = new DbSessionStore(models, clock);
  return { config, db, clock, log, scheduler, events, crypto: key, activity, settings, lockout, users, tokens, sessions, health: [] };
}

export const INITIAL_PASSWORD_FILE = 'initial-admin-password.txt';

/**
 * First start: with an empty users table, create the admin from GATEHOUSE_ADMIN_USER/PASSWORD, or
 * with a generated password written to <dataDir>/initial-admin-password.txt (mode 0600).
 */
export async function bootstrapAdmin(deps: Deps): Promise<{ created: boolean; username?: string; passwordFile?: string }> {
  if ((await deps.users.count()) > 0) return { created: false };
  const username = deps.config.initialAdmin.user ?? 'admin';
  let password = deps.config.initialAdmin.password;
  let passwordFile: string | undefined;
  if (!password) {
    password = generatePassword();
    passwordFile = path.join(deps.config.dataDir, INITIAL_PASSWORD_FILE);
    fs.writeFileSync(passwordFile, `username: ${username}\npassword: ${password}\n`, { mode: 0o600 });
    fs.chmodSync(passwordFile, 0o600);
  }
  await deps.users.create({ username, password, role: 'admin' });
  await deps.activity.record({ source: 'system', event_type: 'admin_bootstrapped', message: `First admin ${username} created`, details: { password_file: passwordFile ?? null } });
  return { created: true, username, passwordFile };
}
