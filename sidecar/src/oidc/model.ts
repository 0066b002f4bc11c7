// The `oidc_providers` and `oidc_identities` tables (migration 080_oidc_providers) as Sequelize
// models, registered by their feature (oidc/feature.ts `models`).
import { DataTypes, type Sequelize } from 'sequelize';
import { defineModel, flagColumn, idColumn, msColumn, tableOpts, type M } from '../db/define.js';

export interface OidcProviderRow {
  id: number;
  name: string;
  issuer: string;
  client_id: string;
  /** sealed with the master key; null for a public client (PKCE only) */
  client_secret_enc: string | null;
  /** JSON array of scope names */
  scopes: string;
  username_claim: string;
  email_claim: string;
  groups_claim: string;
  enabled: boolean;
  jit_create: boolean;
  /** JSON array of {match: {group?, email?}, role} */
  role_mappings: string;
  allow_password_for_sso_users: boolean;
  /** an admin allowed this provider loopback, private ranges and this server (an internal IdP) */
  allow_private: boolean;
  created_at: number;
  updated_at: number;
}

/** An account linked to a provider's subject (`sub`). */
export interface OidcIdentityRow {
  id: number;
  provider_id: number;
  subject: string;
  user_id: number;
  created_at: number;
  last_login_at: number | null;
}

declare module '../db/models.js' {
  interface Models {
    OidcProvider: M<OidcProviderRow>;
    OidcIdentity: M<OidcIdentityRow>;
  }
}

export function defineOidcModels(s: Sequelize): { OidcProvider: M<OidcProviderRow>; OidcIdentity: M<OidcIdentityRow> } {
  const OidcProvider = defineModel<OidcProviderRow>(
    s,
    'OidcProvider',
    {
      id: idColumn(),
      name: DataTypes.STRING,
      issuer: DataTypes.STRING,
      client_id: DataTypes.STRING,
      client_secret_enc: DataTypes.TEXT,
      scopes: DataTypes.TEXT,
      username_claim: DataTypes.STRING,
      email_claim: DataTypes.STRING,
      groups_claim: DataTypes.STRING,
      enabled: { ...flagColumn(), defaultValue: true },
      jit_create: flagColumn(),
      role_mappings: DataTypes.TEXT,
      allow_password_for_sso_users: { ...flagColumn(), defaultValue: true },
      allow_private: flagColumn(),
      created_at: msColumn(),
      updated_at: msColumn(),
    },
    tableOpts('oidc_providers'),
  );
  const OidcIdentity = defineModel<OidcIdentityRow>(
    s,
    'OidcIdentity',
    {
      id: idColumn(),
      provider_id: DataTypes.INTEGER,
      subject: DataTypes.STRING,
      user_id: DataTypes.INTEGER,
      created_at: msColumn(),
      last_login_at: DataTypes.BIGINT,
    },
    tableOpts('oidc_identities'),
  );
  return { OidcProvider, OidcIdentity };
}
