// The session roles (docs/guides/security.md "Who may do what"), lowest first. A module of its own
// without imports, so request schemas (users) and browsers can use it. A session passes an
// endpoint when its role is at least the endpoint's least role (registry.ts leastRole).
// - user: the account of someone who uses the VPN and RDP routes (desktop client, RDP routes given
//   to users): reads the admin app's pages except the accounts, tokens and backups; writes only
//   their own profile.
// - viewer: read-only everywhere it may see, the accounts, tokens and backups lists included;
//   never a secret; writes only their own profile.
// - operator: a viewer who also manages peers, groups, tags, gateways, routes, route auth and RDP
//   routes (the writes in the `peers` and `routes` token scopes); no users, tokens, settings,
//   backup or licence, and never a secret.
// - admin: everything.
export const ROLES = ['user', 'viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export function roleAtLeast(role: string, least: Role): boolean {
  const have = ROLES.indexOf(role as Role);
  return have >= 0 && have >= ROLES.indexOf(least);
}
