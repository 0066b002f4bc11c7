// Request and response schemas of the OpenID Connect providers API (validation, the OpenAPI
// document, and the admin app's types through sidecar/ui/src/protocol.ts).
import { z } from 'zod';
import { ROLES } from '@gatehouse/common/roles.js';
import { messageRefSchema } from '@gatehouse/common/messages/ref.js';
import { ignoringReadOnly, storedResourceFields } from '../http/input.js';
import { text, textPattern, UNPROCESSABLE } from '../http/fields.js';
import { fieldIssue, fieldText } from '../http/messages.js';
import { msg } from '@gatehouse/common/messages/index.js';

const NAME_RE = /^[A-Za-z0-9_.:/-]+$/;

const name = text({ min: 1, max: 64 }).meta({ description: 'shown on the sign-in button ("Sign in with <name>"); unique' });

const issuer = text({ min: 1, max: 2048 })
  .superRefine((v, ctx) => {
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      ctx.addIssue(fieldIssue(msg('oidc.field.issuer_url'), { params: UNPROCESSABLE }));
      return;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') ctx.addIssue(fieldIssue(msg('oidc.field.issuer_url')));
    else if (u.username || u.password || u.search || u.hash || !u.hostname) ctx.addIssue(fieldIssue(msg('oidc.field.issuer_url'), { params: UNPROCESSABLE }));
  })
  .meta({
    pattern: textPattern(false, true).replace(/^\^/, '^[Hh][Tt][Tt][Pp][Ss]?://'),
    description:
      "the provider's issuer URL, exactly as its discovery document (<issuer>/.well-known/openid-configuration) names it. https; http only with allow_private (an IdP on the LAN or loopback)",
  });

const clientId = text({ min: 1, max: 512 }).meta({ description: 'the client (application) id registered at the provider' });
const clientSecret = text({ min: 1, max: 1024, trim: false }).meta({
  description:
    'the client secret registered at the provider; stored sealed with the master key, never shown again (client_secret_set says whether there is one)',
});

const claim = (dflt: string, what: string) =>
  z
    .string()
    .min(1, 'required')
    .max(128, fieldText('field.max_chars', { max: 128 }))
    .regex(NAME_RE, fieldText('oidc.field.claim'))
    .meta({ description: `the claim that gives the ${what} (default ${dflt})` });

const scopes = z
  .array(
    z
      .string()
      .min(1, 'required')
      .max(128, fieldText('field.max_chars', { max: 128 }))
      .regex(NAME_RE, fieldText('oidc.field.scope')),
  )
  .min(1, fieldText('oidc.field.scopes_openid'))
  .max(20, fieldText('field.at_most', { max: 20 }))
  // that openid is among them is a rule the document cannot state (422)
  .refine((v) => v.includes('openid'), { message: fieldText('oidc.field.scopes_openid'), params: UNPROCESSABLE })
  .meta({ description: 'the scopes asked for (openid is required; default openid, profile, email)' });

const match = z
  .strictObject({
    group: text({ min: 1, max: 256 }).optional().meta({ description: 'a value of the groups claim' }),
    email: z
      .string()
      .trim()
      .toLowerCase()
      .email(fieldText('field.email'))
      .max(254)
      .optional()
      .meta({ description: 'an e-mail address (compared without regard to case)' }),
  })
  .superRefine((m, ctx) => {
    if ((m.group === undefined) === (m.email === undefined)) ctx.addIssue(fieldIssue(msg('oidc.field.mapping_match')));
  })
  // exactly one of the two, as the document states it
  .meta({ minProperties: 1, maxProperties: 1 });

export const roleMapping = z.strictObject({
  match,
  role: z.enum(ROLES).meta({ description: 'the role an account matched by this rule gets (the highest role of every rule that matches)' }),
});
export type RoleMapping = z.output<typeof roleMapping>;

const roleMappings = z
  .array(roleMapping)
  .max(100, fieldText('field.at_most', { max: 100 }))
  .meta({
    description:
      'who may sign in and as what: a rule matches a value of the groups claim or the e-mail address; the highest matching role wins. Nobody matched: the sign-in is refused with a page that says why',
  });

const flag = z.boolean({ error: 'must be true or false' });

const fields = {
  name,
  issuer,
  client_id: clientId,
  scopes,
  username_claim: claim('preferred_username', 'username'),
  email_claim: claim('email', 'e-mail address'),
  groups_claim: claim('groups', 'groups'),
  enabled: flag.meta({ description: 'shown on the sign-in page and usable (default true)' }),
  jit_create: flag.meta({ description: 'create the account at its first sign-in when none is linked (default false)' }),
  role_mappings: roleMappings,
  allow_password_for_sso_users: flag.meta({
    description:
      'accounts linked to this provider may still sign in with a password (default true). false: they sign in only through the provider; the first admin account (the break-glass admin) always keeps its password',
  }),
  allow_private: flag.meta({
    description:
      'this provider may be reached on loopback, private ranges and this server (an internal IdP), as a webhook with allow_private; the operator can allow it for every provider with GATEHOUSE_OUTBOUND_ALLOW_PRIVATE=oidc (default false)',
  }),
};

export const createProviderBody = z.strictObject({
  name: fields.name,
  issuer: fields.issuer,
  client_id: fields.client_id,
  client_secret: clientSecret.optional(),
  scopes: fields.scopes.optional(),
  username_claim: fields.username_claim.optional(),
  email_claim: fields.email_claim.optional(),
  groups_claim: fields.groups_claim.optional(),
  enabled: fields.enabled.optional(),
  jit_create: fields.jit_create.optional(),
  role_mappings: fields.role_mappings.optional(),
  allow_password_for_sso_users: fields.allow_password_for_sso_users.optional(),
  allow_private: fields.allow_private.optional(),
});
export type ProviderInput = z.output<typeof createProviderBody>;

export const PROVIDER_READ_ONLY = storedResourceFields('oidc provider', {
  client_secret_set: z.boolean().optional(),
  redirect_uri: z.string().optional(),
  route_redirect_uris: z.array(z.string()).optional(),
});
export const updateProviderBody = ignoringReadOnly(
  z.strictObject({
    name: fields.name.optional(),
    issuer: fields.issuer.optional(),
    client_id: fields.client_id.optional(),
    client_secret: z
      .union([z.literal(''), clientSecret, z.null()])
      .optional()
      .meta({ description: 'a new client secret; omitted or empty keeps the stored one, null removes it' }),
    scopes: fields.scopes.optional(),
    username_claim: fields.username_claim.optional(),
    email_claim: fields.email_claim.optional(),
    groups_claim: fields.groups_claim.optional(),
    enabled: fields.enabled.optional(),
    jit_create: fields.jit_create.optional(),
    role_mappings: fields.role_mappings.optional(),
    allow_password_for_sso_users: fields.allow_password_for_sso_users.optional(),
    allow_private: fields.allow_private.optional(),
  }),
  PROVIDER_READ_ONLY,
);
export type ProviderPatch = z.output<typeof updateProviderBody>;

const isoDate = z.string().meta({ format: 'date-time' });

export const providerView = z
  .object({
    id: z.number().int(),
    name: z.string(),
    issuer: z.string(),
    client_id: z.string(),
    client_secret_set: z.boolean().meta({ description: 'a client secret is stored (it is never shown)' }),
    scopes: z.array(z.string()),
    username_claim: z.string(),
    email_claim: z.string(),
    groups_claim: z.string(),
    enabled: z.boolean(),
    jit_create: z.boolean(),
    role_mappings: z.array(z.object({ match: z.object({ group: z.string().optional(), email: z.string().optional() }), role: z.enum(ROLES) })),
    allow_password_for_sso_users: z.boolean(),
    allow_private: z.boolean(),
    redirect_uri: z.string().meta({ description: 'the redirect URL to register at the provider: <public admin URL>/auth/oidc/callback' }),
    route_redirect_uris: z.array(z.string()).meta({
      description:
        "the redirect URLs to register as well for route auth's method oidc: <scheme>://<route domain>/route-auth/oidc/callback of each route whose visitors sign in through this provider (a wildcard route: each host it serves)",
    }),
    created_at: isoDate,
    updated_at: isoDate,
  })
  .meta({ description: 'An OpenID Connect provider for the admin sign-in (never its client secret)' });
export type ProviderView = z.infer<typeof providerView>;

export const providerResponse = z.object({ ok: z.literal(true), provider: providerView });
export const providersResponse = z.object({ ok: z.literal(true), providers: z.array(providerView) });
export const deletedResponse = z.object({ ok: z.literal(true), deleted: z.literal(true) });

export const discoveryResult = z
  .object({
    reachable: z.boolean().meta({ description: 'the discovery document was fetched, is JSON, names this issuer and the endpoints a sign-in needs' }),
    message: z.string().meta({ description: 'what was found, in English' }),
    message_code: messageRefSchema.meta({ description: 'the same as a message of the catalogue (oidc.test.*)' }),
    discovery_url: z.string(),
    endpoints: z
      .object({
        authorization_endpoint: z.string().nullable(),
        token_endpoint: z.string().nullable(),
        jwks_uri: z.string().nullable(),
        userinfo_endpoint: z.string().nullable(),
      })
      .nullable(),
  })
  .meta({ description: "The result of fetching a provider's discovery document" });
export type DiscoveryResult = z.infer<typeof discoveryResult>;
export const testResponse = z.object({ ok: z.literal(true), result: discoveryResult });
