// The platform services every feature service is built on (configuration, database, clock, logger,
// master key, activity log, settings, accounts, sessions). Built first by app-context.ts, which then
// builds the feature services on top of them into the typed AppContext.
import type { Config } from './config.js';
import type { Database } from './db/index.js';
import type { Clock } from './util/clock.js';
import type { Logger } from './util/logger.js';
import type { ActivityLog } from './logs/activity.js';
import type { SettingsStore } from './settings/store.js';
import type { LockoutService } from './auth/lockout.js';
import type { UsersService } from './users/service.js';
import type { SecondFactorService } from './auth/second-factor.js';
import type { TokensService } from './tokens/service.js';
import type { DbSessionStore } from './http/session-store.js';
import type { MasterKey } from './util/crypto.js';
import type { Scheduler } from './util/scheduler.js';
import type { EventBus } from './events.js';
import type { FeatureGate } from './licence/features.js';
import type { LicenceService } from './licence/service.js';
import type { PublicHost } from './system/public-host.js';
import type { OutboundPolicy, OutboundUse } from './util/outbound.js';
export type { GatewayAuth } from './http/platform.js';

export interface HealthCheck {
  name: string;
  check: () => Promise<{ ok: boolean; detail?: Record<string, unknown> }>;
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
  /** the second factor (TOTP, recovery codes) of admin-UI accounts */
  secondFactor: SecondFactorService;
  tokens: TokensService;
  sessions: DbSessionStore;
  /** Which licence features are on (licence/features.ts): the licence service, unless a test passed its own gate. Every gated code path asks it. */
  features: FeatureGate;
  /** The licence: state, activation, refresh, limits (licence/service.ts). */
  licence: LicenceService;
  /** The request-forgery policy of a server-side fetch (util/outbound.ts): every request to a URL the server was given goes through it. */
  outbound: (use: OutboundUse) => OutboundPolicy;
  /** This server's public host (what peers dial), computed in one place (system/public-host.ts). */
  publicHost: PublicHost;
}
