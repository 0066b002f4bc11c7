// The scopes an API token can carry (docs/guides/authentication.md "API tokens"). A module of its own without imports, so
// request schemas (tokens, the desktop client) and browsers can use it.
export const SCOPES = ['full-access', 'read-only', 'peers', 'routes', 'settings', 'webhooks', 'logs', 'system', 'client', 'gateway'] as const;
export type Scope = (typeof SCOPES)[number];
