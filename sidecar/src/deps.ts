// The services container handed to every feature's endpoints. Built once in app-context.ts.
import type { Config } from './config.js';
import type { Database } from './db/index.js';
import type { Clock } from './util/clock.js';
import type { Logger } from './util/logger.js';
import type { ActivityLog } from './logs/activity.js';
import type { SettingsStore } from './settings/store.js';
import type { LockoutService } from './auth/lockout.js';
import type { UsersService } from './users/service.js';
import type { TokensService } from './tokens/service.js';
import type { DbSessionStore } from './auth/session-store.js';
import type { MasterKey } from './util/crypto.js';
import type { Scheduler } from './util/scheduler.js';
import type { EventBus } from './events.js';

export interface HealthCheck {
  name: string;
  check: () => Promise<{ ok: boolean; detail?: Record<string, unknown> }>;
}

/** Gateway-token verification, provided by the gateways feature. */
export interface GatewayAuth {
  verify(token: string): Promise<{ peerId: number } | null>;
}

export interface Deps {
  config: Config;
  db: Database;
  clock: Clock;
  log: Logger;
  /** The periodic work of every service (util/scheduler.ts). */
  scheduler: Scheduler;
  /** Typed domain events: emitted once where they happen, consumed by caches, activity log, webhooks, live UI (events.ts). */
  events: EventBus;
  crypto: MasterKey;
  activity: ActivityLog;
  settings: SettingsStore;
  lockout: LockoutService;
  users: UsersService;
  tokens: TokensService;
  sessions: DbSessionStore;
  health: HealthCheck[];
  gatewayAuth?: GatewayAuth;
  /** Feature services register themselves here (peers, routes, wireguard, proxy, ...). */
  [feature: string]: unknown;
}
