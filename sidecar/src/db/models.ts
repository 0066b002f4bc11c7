// Sequelize models. Tables are created by migrations (never by sync); models only describe them.
// All times are epoch milliseconds (BIGINT), set by the services from their injectable clock.
// Every model is declared the one way db/define.ts describes. The platform's core tables (accounts,
// sessions, tokens, settings, the activity log, which the HTTP kit reads) are declared here; a
// feature declares its own tables in its model.ts and registers them through its Feature (`models`,
// feature.ts): peers and peer_traffic in peers/, routes in routes/, peer_groups in groups/, tags in
// tags/. defineModels() defines them all once, when the
// database opens (db/index.ts openDatabase).
import { DataTypes, type Sequelize } from 'sequelize';
import type { Role } from '@gatehouse/common/roles.js';
import { defineModel, flagColumn, idColumn, msColumn, tableOpts } from './define.js';

export type { M } from './define.js';

export interface UserRow {
  id: number;
  username: string;
  email: string | null;
  password_hash: string;
  role: Role;
  language: 'en' | 'de';
  theme: 'pro' | 'default' | null;
  last_login_at: number | null;
  /** set for a generated password: the next sign-in asks for a new one (GET /password) */
  must_change_password: boolean;
  created_at: number;
  updated_at: number;
}
export interface SessionRow {
  sid: string;
  user_id: number | null;
  data: string;
  expires_at: number;
}
/** An admin-UI account's TOTP (migration 078; auth/second-factor.ts). Secrets are sealed with the master key. */
export interface UserTotpRow {
  id: number;
  user_id: number;
  /** the active secret; null while only an enrolment is pending */
  secret: string | null;
  /** a new secret awaiting its first code (enrolment, or a replacement of the active one) */
  pending_secret: string | null;
  /** the last accepted 30-second step: a code is taken once */
  last_step: number | null;
  activated_at: number | null;
  created_at: number;
  updated_at: number;
}
/** One recovery code of an account (migration 078): its SHA-256 only; used_at once spent. */
export interface UserRecoveryCodeRow {
  id: number;
  user_id: number;
  code_hash: string;
  used_at: number | null;
  created_at: number;
}
/** A passkey (WebAuthn credential) of an admin-UI account (migration 081; auth/second-factor.ts). */
export interface UserPasskeyRow {
  id: number;
  user_id: number;
  /** base64url, as the browser names it */
  credential_id: string;
  /** base64url of the COSE public key */
  public_key: string;
  /** the authenticator's signature counter at the last use */
  counter: number;
  /** JSON array of transport hints (usb, internal, hybrid, …), or null */
  transports: string | null;
  name: string;
  created_at: number;
  last_used_at: number | null;
}
export interface LoginAttemptRow {
  id: number;
  record_type: string;
  identifier: string;
  ip: string | null;
  outcome: 'failure' | 'success' | 'unlock';
  created_at: number;
}
export interface ApiTokenRow {
  id: number;
  name: string;
  token_hash: string;
  token_hint: string;
  scopes: string;
  expires_at: number | null;
  user_id: number | null;
  peer_id: number | null;
  fingerprint: string | null;
  fingerprint_bound_at: number | null;
  last_used_at: number | null;
  created_by: number | null;
  created_at: number;
  /** JSON array of IPv4 CIDRs: the token's split-tunnel override (null = the server default; migration 061) */
  split_tunnel: string | null;
}
export interface SettingRow {
  key: string;
  value: string;
  updated_at: number;
}
export interface ActivityRow {
  id: number;
  severity: string;
  source: string;
  event_type: string;
  message: string;
  code: string | null;
  params: string | null;
  details: string | null;
  user_id: number | null;
  ip: string | null;
  created_at: number;
}

const opts = tableOpts;
const id = idColumn;
const ms = msColumn;

/** A feature's models: its model.ts `define<Thing>Models(sequelize)`, named in its Feature (`models`). */
export type ModelDefiner = (s: Sequelize) => object;

type PlatformModels = ReturnType<typeof definePlatformModels>;

/**
 * Every model by name: the platform's (below), and each feature's, which its model.ts adds to this
 * interface (`declare module '../db/models.js' { interface Models { Thing: M<ThingRow> } }`).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the features' model.ts files add their members (declaration merging)
export interface Models extends PlatformModels {}

/** Defines the platform's models and the features' (`features`: their Feature.models), once per database. */
export function defineModels(s: Sequelize, features: readonly ModelDefiner[] = []): Models {
  const models: PlatformModels = definePlatformModels(s);
  for (const define of features) Object.assign(models, define(s));
  return models as Models;
}

function definePlatformModels(s: Sequelize) {
  const User = defineModel<UserRow>(
    s,
    'User',
    {
      id: id(),
      username: DataTypes.STRING,
      email: DataTypes.STRING,
      password_hash: DataTypes.STRING,
      role: DataTypes.STRING,
      language: DataTypes.STRING,
      theme: DataTypes.STRING,
      last_login_at: DataTypes.BIGINT,
      must_change_password: flagColumn(),
      created_at: ms(),
      updated_at: ms(),
    },
    opts('users'),
  );
  const Session = defineModel<SessionRow>(
    s,
    'Session',
    {
      sid: { type: DataTypes.STRING, primaryKey: true },
      user_id: DataTypes.INTEGER,
      data: DataTypes.TEXT,
      expires_at: ms(),
    },
    opts('sessions'),
  );
  const LoginAttempt = defineModel<LoginAttemptRow>(
    s,
    'LoginAttempt',
    {
      id: id(),
      record_type: DataTypes.STRING,
      identifier: DataTypes.STRING,
      ip: DataTypes.STRING,
      outcome: DataTypes.STRING,
      created_at: ms(),
    },
    opts('login_attempts'),
  );
  const UserTotp = defineModel<UserTotpRow>(
    s,
    'UserTotp',
    {
      id: id(),
      user_id: DataTypes.INTEGER,
      secret: DataTypes.TEXT,
      pending_secret: DataTypes.TEXT,
      last_step: DataTypes.BIGINT,
      activated_at: DataTypes.BIGINT,
      created_at: ms(),
      updated_at: ms(),
    },
    opts('user_totp'),
  );
  const UserRecoveryCode = defineModel<UserRecoveryCodeRow>(
    s,
    'UserRecoveryCode',
    {
      id: id(),
      user_id: DataTypes.INTEGER,
      code_hash: DataTypes.STRING,
      used_at: DataTypes.BIGINT,
      created_at: ms(),
    },
    opts('user_recovery_codes'),
  );
  const UserPasskey = defineModel<UserPasskeyRow>(
    s,
    'UserPasskey',
    {
      id: id(),
      user_id: DataTypes.INTEGER,
      credential_id: DataTypes.STRING,
      public_key: DataTypes.TEXT,
      counter: DataTypes.BIGINT,
      transports: DataTypes.TEXT,
      name: DataTypes.STRING,
      created_at: ms(),
      last_used_at: DataTypes.BIGINT,
    },
    opts('user_passkeys'),
  );
  const ApiToken = defineModel<ApiTokenRow>(
    s,
    'ApiToken',
    {
      id: id(),
      name: DataTypes.STRING,
      token_hash: DataTypes.STRING,
      token_hint: DataTypes.STRING,
      scopes: DataTypes.TEXT,
      expires_at: DataTypes.BIGINT,
      user_id: DataTypes.INTEGER,
      peer_id: DataTypes.INTEGER,
      fingerprint: DataTypes.STRING,
      fingerprint_bound_at: DataTypes.BIGINT,
      last_used_at: DataTypes.BIGINT,
      created_by: DataTypes.INTEGER,
      created_at: ms(),
      split_tunnel: DataTypes.TEXT,
    },
    opts('api_tokens'),
  );
  const Setting = defineModel<SettingRow>(
    s,
    'Setting',
    {
      key: { type: DataTypes.STRING, primaryKey: true },
      value: DataTypes.TEXT,
      updated_at: ms(),
    },
    opts('settings'),
  );
  const Activity = defineModel<ActivityRow>(
    s,
    'Activity',
    {
      id: id(),
      severity: DataTypes.STRING,
      source: DataTypes.STRING,
      event_type: DataTypes.STRING,
      message: DataTypes.TEXT,
      code: DataTypes.STRING,
      params: DataTypes.TEXT,
      details: DataTypes.TEXT,
      user_id: DataTypes.INTEGER,
      ip: DataTypes.STRING,
      created_at: ms(),
    },
    opts('activity_log'),
  );
  return { User, Session, LoginAttempt, UserTotp, UserRecoveryCode, UserPasskey, ApiToken, Setting, Activity };
}
