// What the HTTP kit (http/app.ts, http/auth.ts) needs of the platform, by type: the composition root
// hands it the whole container, which has all of it. Named here, in the kit, so that the kit names
// no feature and no module of the composition root, not even for a type.
import type { Config } from '../config.js';
import type { Database } from '../db/index.js';
import type { MasterKey } from '../util/crypto.js';
import type { Logger } from '../util/logger.js';
import type { FeatureGate } from './feature-gate.js';
import type { Scope } from './scopes.js';
import type { DbSessionStore } from './session-store.js';

/** An API token as its verification finds it (the tokens feature verifies them: tokens/service.ts). */
export interface VerifiedToken {
  id: number;
  scopes: Scope[];
  user_id: number | null;
  peer_id: number | null;
  created_by: number | null;
}

/** API-token verification, provided by the tokens feature. */
export interface TokenVerifier {
  /** The token, or null for an unknown, expired or revoked one; binds an unbound client token to its machine (fingerprint). */
  verify(plain: string, fingerprint: string | undefined): Promise<VerifiedToken | null>;
}

/** Gateway-token verification, provided by the gateways feature. */
export interface GatewayAuth {
  /** The gateway a token belongs to and its peer's tunnel address; null for an unknown, disabled or expired one. */
  verify(token: string): Promise<{ peerId: number; address: string } | null>;
}

/** What the HTTP application needs: configuration, database, logger, master key, sessions, the licence gate, token verification and, when gateways exist, gateway-token verification. */
export interface HttpDeps {
  config: Config;
  db: Database;
  log: Logger;
  crypto: MasterKey;
  sessions: DbSessionStore;
  features: FeatureGate;
  tokens: TokenVerifier;
  gatewayAuth?: GatewayAuth;
}
