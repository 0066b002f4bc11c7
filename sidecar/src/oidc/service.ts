// OpenID Connect providers for the admin sign-in: the admin's CRUD (the client secret sealed with
// the master key and never returned), the discovery test, and the steps of a sign-in through a
// provider (oidc/flow.ts serves them): the authorization URL with PKCE (S256), state and nonce, and
// the callback's code exchange, whose ID token openid-client checks (signature against the issuer's
// keys, issuer, audience, nonce, expiry with a small clock tolerance); then the claims, the role
// mapping and the account (linked, linked by a verified e-mail address, or created just in time).
// Every request to a provider goes through the request-forgery guard (util/outbound.ts) with the
// webhooks' rule: loopback, private ranges and this server only for a provider with allow_private or
// when the operator allowed it for every provider (GATEHOUSE_OUTBOUND_ALLOW_PRIVATE=oidc). HTTP-free.
import * as client from 'openid-client';
import { msg, type Msg } from '@gatehouse/common/messages/index.js';
import { ROLES, type Role } from '@gatehouse/common/roles.js';
import { UniqueConstraintError, fn, col, where as sqlWhere } from 'sequelize';
import type { Deps } from '../deps.js';
import { MasterKey } from '../util/crypto.js';
import type { Models, UserRow } from '../db/models.js';
import { asBool, findRow, findRows } from '../db/define.js';
import { AppError, conflict, notFound, unprocessable, type FieldMessages } from '../util/errors.js';
import { FetchFailed, guardedFetch, guardedRequest, NotAllowed, type OutboundPolicy } from '../util/outbound.js';
import { generatePassword } from '../users/service.js';
import type { OidcIdentityRow, OidcProviderRow } from './model.js';
import type { DiscoveryResult, ProviderInput, ProviderPatch, ProviderView, RoleMapping } from './schema.js';

export const DEFAULT_SCOPES = ['openid', 'profile', 'email'];
/** Route auth's callback (method oidc, route-auth/oidc.ts), on each protected route's own host. */
export const ROUTE_CALLBACK_PATH = '/route-auth/oidc/callback';
/** Seconds the ID token's times may be off (iat, exp, nbf): a small clock skew between the two machines. */
export const CLOCK_TOLERANCE_S = 30;
/** How long a started sign-in waits for its callback. */
export const FLOW_MAX_AGE_MS = 10 * 60_000;
/** How long a provider's discovery (and with it its keys) is reused. */
const CONFIG_TTL_MS = 10 * 60_000;
const FETCH_TIMEOUT_MS = 10_000;

type Core = Pick<Deps, 'db' | 'clock' | 'events' | 'crypto' | 'outbound' | 'users' | 'activity' | 'log'>;

/** A started sign-in, kept in the (server-side) session until its callback: single use. */
export interface OidcFlow {
  state: string;
  nonce: string;
  verifier: string;
  providerId: number;
  /** the same-origin target after the sign-in (auth/next.ts safeNext) */
  next: string;
  redirectUri: string;
  /** epoch ms */
  at: number;
}

/**
 * Seals a waiting flow's PKCE verifier where the flow waits (the admin's session, the route sign-ins'
 * table): a key derived from the master key for one purpose, so no value sealed with the master key
 * itself lives there, and a key rotation leaves the sign-ins in progress unopenable (start again).
 */
export class VerifierSeal {
  private readonly key: MasterKey;

  constructor(master: MasterKey, purpose: string) {
    this.key = MasterKey.fromBuffer(master.derive(purpose));
  }

  seal(verifier: string): string {
    return this.key.seal(verifier);
  }

  /** The verifier, or null when it does not open (sealed under another key, or tampered with). */
  open(sealed: string): string | null {
    try {
      return this.key.open(sealed);
    } catch {
      return null;
    }
  }
}

/** Why a sign-in through a provider was refused (the page words it; oidc/pages.ts). */
export type RefusalReason =
  | 'state_invalid'
  | 'expired'
  | 'provider_gone'
  | 'provider_error'
  | 'provider_unreachable'
  | 'exchange_failed'
  | 'no_mapping'
  | 'no_account'
  | 'email_unverified'
  | 'locked';

export class SignInRefused extends Error {
  constructor(
    readonly reason: RefusalReason,
    readonly status: number,
    /** what the page may show besides the reason (the claims seen, the provider's own error) */
    readonly detail: { provider?: string; username?: string; email?: string; groups?: string[]; error?: string } = {},
  ) {
    super(reason);
    this.name = 'SignInRefused';
  }
}

/** Who the provider says signed in (the claims this provider's settings name). */
export interface SignInClaims {
  subject: string;
  username: string | null;
  /** lower case */
  email: string | null;
  emailVerified: boolean;
  groups: string[];
}

/** What a successful callback leads to: the account, and the role it holds now. */
export interface SignInResult {
  user: UserRow;
  provider: OidcProviderRow;
}

const parseJson = <T>(v: string, fallback: T): T => {
  try {
    return JSON.parse(v) as T;
  } catch {
    return fallback;
  }
};

/** The discovery document's URL of an issuer (as openid-client fetches it). */
export function discoveryUrl(issuer: string): string {
  const u = new URL(issuer);
  u.pathname = `${u.pathname.replace(/\/$/, '')}/.well-known/openid-configuration`;
  return u.href;
}

/** The highest role any rule gives these claims, or null when none matches. */
export function mappedRole(mappings: RoleMapping[], claims: { email: string | null; groups: string[] }): Role | null {
  let best: Role | null = null;
  const email = claims.email?.toLowerCase() ?? null;
  for (const m of mappings) {
    const hit = m.match.group !== undefined ? claims.groups.includes(m.match.group) : email !== null && m.match.email === email;
    if (hit && (best === null || ROLES.indexOf(m.role) > ROLES.indexOf(best))) best = m.role;
  }
  return best;
}

/** The enabled providers, for the sign-in page's buttons (id and name, by name). */
export async function enabledProviders(models: Models): Promise<{ id: number; name: string }[]> {
  const rows = await findRows(models.OidcProvider, { where: { enabled: true }, attributes: ['id', 'name'], order: [['name', 'ASC']] });
  return rows.map((r) => ({ id: Number(r.id), name: String(r.name) }));
}

/**
 * Whether an account may sign in with its password: not when it is linked to a provider that switched
 * passwords off for its users (allow_password_for_sso_users false), except the break-glass admin,
 * the admin account with the lowest id, which always keeps its password.
 */
export async function passwordSignInAllowed(models: Models, user: Pick<UserRow, 'id' | 'role'>): Promise<boolean> {
  const links = await findRows(models.OidcIdentity, { where: { user_id: user.id }, attributes: ['provider_id'] });
  if (!links.length) return true;
  const providers = await findRows(models.OidcProvider, { where: { id: links.map((l) => l.provider_id) }, attributes: ['allow_password_for_sso_users'] });
  if (providers.every((p) => asBool(p.allow_password_for_sso_users))) return true;
  if (user.role !== 'admin') return false;
  const first = await findRow(models.User, { where: { role: 'admin' }, order: [['id', 'ASC']], attributes: ['id'] });
  return first?.id === user.id;
}

function claimString(v: unknown): string | null {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : typeof v === 'number' ? String(v) : null;
}

function claimList(v: unknown): string[] {
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  if (typeof v === 'string' && v !== '') return [v];
  return [];
}

export class OidcService {
  private readonly models: Models;
  private readonly configs = new Map<number, { key: number; at: number; config: client.Configuration }>();
  /** The admin sign-ins' verifiers in their sessions (oidc/flow.ts). */
  readonly adminFlowSeal: VerifierSeal;

  constructor(private readonly core: Core) {
    this.models = core.db.models;
    this.adminFlowSeal = new VerifierSeal(core.crypto, 'admin-oidc-flow');
  }

  /** The guard's policy for one provider: the operator's policy of `oidc`, widened when an admin chose allow_private for it. */
  policy(allowPrivate: boolean): OutboundPolicy {
    const base = this.core.outbound('oidc');
    return allowPrivate ? { ...base, allowPrivate: true } : base;
  }

  private async row(id: number): Promise<OidcProviderRow> {
    const r = await findRow(this.models.OidcProvider, { where: { id } });
    if (!r) throw notFound(msg('resource.not_found', { what: 'OIDC provider' }));
    return r;
  }

  /**
   * The redirect URLs to register for route auth's method oidc, by provider: one per route whose
   * visitors sign in through it, <scheme>://<route domain>/route-auth/oidc/callback (https when the
   * route has HTTPS; a wildcard route's callback is at each host it serves).
   */
  private async routeRedirectUris(ids: number[]): Promise<Map<number, string[]>> {
    const out = new Map<number, string[]>();
    if (!ids.length) return out;
    const auths = await findRows(this.models.RouteAuth, { where: { oidc_provider_id: ids, method: 'oidc' }, attributes: ['route_id', 'oidc_provider_id'] });
    if (!auths.length) return out;
    const routes = await findRows(this.models.Route, { where: { id: auths.map((a) => a.route_id) }, attributes: ['id', 'domain', 'https_enabled'] });
    const byId = new Map(routes.map((r) => [Number(r.id), r]));
    for (const a of auths) {
      const route = byId.get(Number(a.route_id));
      if (!route) continue;
      const uri = `${asBool(route.https_enabled) ? 'https' : 'http'}://${String(route.domain).toLowerCase()}${ROUTE_CALLBACK_PATH}`;
      const list = out.get(Number(a.oidc_provider_id)) ?? [];
      if (!list.includes(uri)) list.push(uri);
      out.set(Number(a.oidc_provider_id), list.sort());
    }
    return out;
  }

  private async views(rows: OidcProviderRow[], redirectUri: string): Promise<ProviderView[]> {
    const routeUris = await this.routeRedirectUris(rows.map((r) => r.id));
    return rows.map((r) => this.view(r, redirectUri, routeUris.get(r.id) ?? []));
  }

  view(r: OidcProviderRow, redirectUri: string, routeRedirectUris: string[] = []): ProviderView {
    return {
      id: r.id,
      name: r.name,
      issuer: r.issuer,
      client_id: r.client_id,
      client_secret_set: r.client_secret_enc !== null && r.client_secret_enc !== '',
      scopes: parseJson<string[]>(r.scopes, DEFAULT_SCOPES),
      username_claim: r.username_claim,
      email_claim: r.email_claim,
      groups_claim: r.groups_claim,
      enabled: asBool(r.enabled),
      jit_create: asBool(r.jit_create),
      role_mappings: parseJson<RoleMapping[]>(r.role_mappings, []),
      allow_password_for_sso_users: asBool(r.allow_password_for_sso_users),
      allow_private: asBool(r.allow_private),
      redirect_uri: redirectUri,
      route_redirect_uris: routeRedirectUris,
      created_at: new Date(Number(r.created_at)).toISOString(),
      updated_at: new Date(Number(r.updated_at)).toISOString(),
    };
  }

  async list(redirectUri: string): Promise<ProviderView[]> {
    return this.views(await findRows(this.models.OidcProvider, { order: [['id', 'ASC']] }), redirectUri);
  }

  async get(id: number, redirectUri: string): Promise<ProviderView> {
    return (await this.views([await this.row(id)], redirectUri))[0];
  }

  /** The stored-state checks of a body (the name taken), for a 400 that names every field at once. */
  async storedProblems(raw: Record<string, unknown>, exceptId?: number): Promise<FieldMessages> {
    const out: FieldMessages = {};
    if (typeof raw.name === 'string' && (await this.nameTaken(raw.name.trim(), exceptId))) out.name = msg('user.field.in_use');
    return out;
  }

  private async nameTaken(name: string, exceptId?: number): Promise<boolean> {
    const rows = await findRows(this.models.OidcProvider, { where: sqlWhere(fn('lower', col('name')), name.toLowerCase()), attributes: ['id'] });
    return rows.some((r) => r.id !== exceptId);
  }

  /** The semantic checks of a provider as it would be stored: the name free, the issuer https unless allow_private. */
  private async check(p: { name: string; issuer: string; allow_private: boolean }, exceptId?: number): Promise<void> {
    if (await this.nameTaken(p.name, exceptId)) throw conflict(msg('oidc.name_taken', { name: p.name }), undefined, { name: msg('user.field.in_use') });
    if (new URL(p.issuer).protocol === 'http:' && !p.allow_private && !this.core.outbound('oidc').allowPrivate)
      throw unprocessable(msg('oidc.issuer_http'), { issuer: msg('oidc.field.issuer_https') });
  }

  async create(input: ProviderInput, redirectUri: string, actor?: number): Promise<ProviderView> {
    const allowPrivate = input.allow_private ?? false;
    await this.check({ name: input.name, issuer: input.issuer, allow_private: allowPrivate });
    const now = this.core.clock();
    let row: OidcProviderRow;
    try {
      row = (
        await this.models.OidcProvider.create({
          name: input.name,
          issuer: input.issuer,
          client_id: input.client_id,
          client_secret_enc: input.client_secret ? this.core.crypto.seal(input.client_secret) : null,
          scopes: JSON.stringify([...new Set(input.scopes ?? DEFAULT_SCOPES)]),
          username_claim: input.username_claim ?? 'preferred_username',
          email_claim: input.email_claim ?? 'email',
          groups_claim: input.groups_claim ?? 'groups',
          enabled: input.enabled ?? true,
          jit_create: input.jit_create ?? false,
          role_mappings: JSON.stringify(input.role_mappings ?? []),
          allow_password_for_sso_users: input.allow_password_for_sso_users ?? true,
          allow_private: allowPrivate,
          created_at: now,
          updated_at: now,
        })
      ).get({ plain: true }) as OidcProviderRow;
    } catch (err) {
      if (err instanceof UniqueConstraintError) throw conflict(msg('oidc.name_taken', { name: input.name }), undefined, { name: msg('user.field.in_use') });
      throw err;
    }
    await this.core.events.emit({
      type: 'oidc_provider_created',
      provider_id: row.id,
      name: row.name,
      issuer: row.issuer,
      allow_private: allowPrivate,
      actor: actor ?? null,
    });
    return this.view(row, redirectUri);
  }

  /** Partial update; a client secret omitted (or '') is kept, null removes it. */
  async update(id: number, input: ProviderPatch, redirectUri: string, actor?: number): Promise<ProviderView> {
    const old = await this.row(id);
    const allowPrivate = input.allow_private ?? asBool(old.allow_private);
    await this.check({ name: input.name ?? old.name, issuer: input.issuer ?? old.issuer, allow_private: allowPrivate }, id);
    const patch: Partial<OidcProviderRow> = {};
    const fields: string[] = [];
    const set = <K extends keyof OidcProviderRow>(k: K, v: OidcProviderRow[K], field: string = k) => {
      patch[k] = v;
      fields.push(field);
    };
    for (const k of ['name', 'issuer', 'client_id', 'username_claim', 'email_claim', 'groups_claim'] as const) {
      if (input[k] !== undefined && input[k] !== old[k]) set(k, input[k]);
    }
    for (const k of ['enabled', 'jit_create', 'allow_password_for_sso_users', 'allow_private'] as const) {
      if (input[k] !== undefined && input[k] !== asBool(old[k])) set(k, input[k]);
    }
    if (input.scopes !== undefined) {
      const v = JSON.stringify([...new Set(input.scopes)]);
      if (v !== old.scopes) set('scopes', v);
    }
    if (input.role_mappings !== undefined) {
      const v = JSON.stringify(input.role_mappings);
      if (v !== old.role_mappings) set('role_mappings', v);
    }
    if (input.client_secret) set('client_secret_enc', this.core.crypto.seal(input.client_secret), 'client_secret');
    else if (input.client_secret === null && old.client_secret_enc) set('client_secret_enc', null, 'client_secret');
    if (fields.length) {
      await this.models.OidcProvider.update({ ...patch, updated_at: this.core.clock() }, { where: { id } });
      this.configs.delete(id);
      await this.core.events.emit({
        type: 'oidc_provider_updated',
        provider_id: id,
        name: patch.name ?? old.name,
        fields,
        allow_private: allowPrivate,
        actor: actor ?? null,
      });
    }
    return this.get(id, redirectUri);
  }

  /** Deletes the provider and the links of accounts to it (the accounts stay). */
  async remove(id: number, actor?: number): Promise<void> {
    const old = await this.row(id);
    // route auth's method oidc names it: deleting it would shut those routes' visitors out unnoticed
    const uses = await findRows(this.models.RouteAuth, { where: { oidc_provider_id: id, method: 'oidc' }, attributes: ['route_id'] });
    if (uses.length) {
      const routes = await findRows(this.models.Route, { where: { id: uses.map((u) => u.route_id) }, attributes: ['domain'], order: [['domain', 'ASC']] });
      throw conflict(msg('oidc.in_use', { domains: routes.map((r) => String(r.domain)) }), undefined, { id: msg('oidc.field.in_use') });
    }
    await this.core.db.sequelize.transaction(async (transaction) => {
      await this.models.OidcIdentity.destroy({ where: { provider_id: id }, transaction });
      await this.models.OidcProvider.destroy({ where: { id }, transaction });
    });
    this.configs.delete(id);
    await this.core.events.emit({ type: 'oidc_provider_deleted', provider_id: id, name: old.name, actor: actor ?? null });
  }

  /**
   * POST /auth/oidc/providers/:id/test: fetches the discovery document through the guard and says
   * what is wrong: not allowed (a private target without allow_private), unreachable, an HTTP error,
   * not JSON, another issuer, a missing authorization, token or key endpoint.
   */
  async test(id: number): Promise<DiscoveryResult> {
    const r = await this.row(id);
    const url = discoveryUrl(r.issuer);
    const result = (m: Msg, endpoints: DiscoveryResult['endpoints'] = null): DiscoveryResult => ({
      reachable: m.code === 'oidc.test.ok',
      message: m.text,
      message_code: { code: m.code, ...(m.params ? { params: m.params as Record<string, unknown> } : {}) },
      discovery_url: url,
      endpoints,
    });
    let body: Buffer;
    try {
      const res = await guardedRequest(url, {
        policy: this.policy(asBool(r.allow_private)),
        headers: { accept: 'application/json' },
        timeoutMs: FETCH_TIMEOUT_MS,
        maxBytes: 1 << 20,
        maxRedirects: 0,
      });
      if (res.status !== 200) return result(msg('oidc.test.status', { status: res.status }));
      body = res.body;
    } catch (err) {
      if (err instanceof NotAllowed) return result(msg('oidc.test.not_allowed'));
      if (err instanceof FetchFailed) return result(msg('oidc.test.unreachable', { detail: err.reason }));
      throw err;
    }
    let doc: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(body.toString('utf8'));
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return result(msg('oidc.test.not_json'));
      doc = parsed as Record<string, unknown>;
    } catch {
      return result(msg('oidc.test.not_json'));
    }
    const str = (k: string) => (typeof doc[k] === 'string' ? (doc[k] as string) : null);
    const endpoints = {
      authorization_endpoint: str('authorization_endpoint'),
      token_endpoint: str('token_endpoint'),
      jwks_uri: str('jwks_uri'),
      userinfo_endpoint: str('userinfo_endpoint'),
    };
    if (str('issuer') !== r.issuer) return result(msg('oidc.test.issuer_mismatch', { expected: r.issuer, found: str('issuer') ?? '(none)' }), endpoints);
    for (const field of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const) {
      if (!endpoints[field]) return result(msg('oidc.test.missing_endpoint', { field }), endpoints);
    }
    return result(msg('oidc.test.ok', { issuer: r.issuer }), endpoints);
  }

  /** The openid-client configuration of a provider (discovery through the guard), reused for a while. */
  private async configuration(r: OidcProviderRow): Promise<client.Configuration> {
    const key = Number(r.updated_at);
    const cached = this.configs.get(r.id);
    if (cached && cached.key === key && this.core.clock() - cached.at < CONFIG_TTL_MS) return cached.config;
    const guarded = guardedFetch(this.policy(asBool(r.allow_private)), { timeoutMs: FETCH_TIMEOUT_MS, maxBytes: 1 << 20 });
    const fetch: client.CustomFetch = (url, o) =>
      guarded(url, {
        method: o.method,
        headers: o.headers,
        body: o.body instanceof Uint8Array ? Buffer.from(o.body) : o.body,
        signal: o.signal,
        redirect: o.redirect,
      });
    const secret = r.client_secret_enc ? this.core.crypto.open(r.client_secret_enc) : null;
    const insecure = new URL(r.issuer).protocol === 'http:';
    const config = await client.discovery(
      new URL(r.issuer),
      r.client_id,
      { [client.clockTolerance]: CLOCK_TOLERANCE_S },
      secret ? client.ClientSecretPost(secret) : client.None(),
      {
        [client.customFetch]: fetch,
        timeout: FETCH_TIMEOUT_MS / 1000,
        ...(insecure ? { execute: [client.allowInsecureRequests] } : {}),
      },
    );
    config[client.customFetch] = fetch;
    this.configs.set(r.id, { key, at: this.core.clock(), config });
    return config;
  }

  /** An enabled provider, or null. */
  async enabledRow(id: number): Promise<OidcProviderRow | null> {
    const r = await findRow(this.models.OidcProvider, { where: { id } });
    return r && asBool(r.enabled) ? r : null;
  }

  /** The first step: the provider's authorization URL (PKCE S256, state, nonce) and the flow to keep until the callback. */
  async begin(r: OidcProviderRow, redirectUri: string, next: string): Promise<{ url: string; flow: OidcFlow }> {
    let config: client.Configuration;
    try {
      config = await this.configuration(r);
    } catch (err) {
      this.core.log.warn('OIDC discovery failed', { provider: r.name, error: (err as Error).message });
      throw new SignInRefused('provider_unreachable', 502, { provider: r.name });
    }
    const verifier = client.randomPKCECodeVerifier();
    const flow: OidcFlow = {
      state: client.randomState(),
      nonce: client.randomNonce(),
      verifier,
      providerId: r.id,
      next,
      redirectUri,
      at: this.core.clock(),
    };
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: parseJson<string[]>(r.scopes, DEFAULT_SCOPES).join(' '),
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: flow.state,
      nonce: flow.nonce,
    });
    return { url: url.href, flow };
  }

  /**
   * The callback: the code exchanged (PKCE verifier, state and nonce checked; the ID token checked by
   * openid-client), the claims read (the ID token's, completed from the user-info endpoint), the
   * role mapped, and the account found, linked or created. Throws SignInRefused with the reason.
   */
  async finish(flow: OidcFlow, query: URLSearchParams, ip: string | null): Promise<SignInResult> {
    const { row: r, claims: c } = await this.exchange(flow, query, ip);
    const { subject, username, email, emailVerified, groups } = c;
    const seen = { provider: r.name, username: username ?? subject, email: email ?? undefined, groups };
    const role = mappedRole(parseJson<RoleMapping[]>(r.role_mappings, []), { email, groups });
    if (!role) {
      await this.refused(r, 'no_mapping', ip, seen);
      throw new SignInRefused('no_mapping', 403, seen);
    }
    const user = await this.account(r, { subject, username, email, emailVerified, role }, ip, seen);
    await this.models.OidcIdentity.update({ last_login_at: this.core.clock() }, { where: { provider_id: r.id, subject } });
    return { user, provider: r };
  }

  /**
   * The callback's protocol part, shared by the admin sign-in and route auth's method oidc
   * (route-auth/oidc.ts): the flow's age, the provider still enabled, the provider's error answer,
   * the code exchange and the claims this provider's settings name. Throws SignInRefused.
   */
  async exchange(flow: OidcFlow, query: URLSearchParams, ip: string | null): Promise<{ row: OidcProviderRow; claims: SignInClaims }> {
    if (this.core.clock() - flow.at > FLOW_MAX_AGE_MS) throw new SignInRefused('expired', 400);
    const r = await this.enabledRow(flow.providerId);
    if (!r) throw new SignInRefused('provider_gone', 400);
    const provider = r.name;
    if (query.get('error')) {
      const error = [query.get('error'), query.get('error_description')].filter(Boolean).join(': ').slice(0, 300);
      await this.refused(r, 'provider_error', ip, { error });
      throw new SignInRefused('provider_error', 400, { provider, error });
    }
    let config: client.Configuration;
    try {
      config = await this.configuration(r);
    } catch (err) {
      this.core.log.warn('OIDC discovery failed', { provider, error: (err as Error).message });
      throw new SignInRefused('provider_unreachable', 502, { provider });
    }
    const current = new URL(flow.redirectUri);
    current.search = query.toString();
    let claims: Record<string, unknown>;
    try {
      const tokens = await client.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: flow.verifier,
        expectedState: flow.state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
      const idClaims = tokens.claims();
      if (!idClaims) throw new Error('no ID token');
      claims = { ...idClaims };
      const wanted = [r.username_claim, r.email_claim, r.groups_claim, 'email_verified'];
      if (wanted.some((c) => claims[c] === undefined) && tokens.access_token && config.serverMetadata().userinfo_endpoint) {
        const info = await client.fetchUserInfo(config, tokens.access_token, idClaims.sub);
        // the ID token's claims win: the user-info answer only fills what it left out
        claims = { ...info, ...claims };
      }
    } catch (err) {
      const error = (err as Error).message.slice(0, 300);
      this.core.log.warn('OIDC code exchange refused', { provider, error });
      await this.refused(r, 'exchange_failed', ip, { error });
      throw new SignInRefused('exchange_failed', 400, { provider, error });
    }
    return {
      row: r,
      claims: {
        subject: String(claims.sub),
        username: claimString(claims[r.username_claim]),
        email: claimString(claims[r.email_claim])?.toLowerCase() ?? null,
        emailVerified: claims.email_verified === true || claims.email_verified === 'true',
        groups: claimList(claims[r.groups_claim]),
      },
    };
  }

  /** The account of a subject: its link, else the account with its verified e-mail address (linked now), else one created when jit_create. */
  private async account(
    r: OidcProviderRow,
    c: { subject: string; username: string | null; email: string | null; emailVerified: boolean; role: Role },
    ip: string | null,
    seen: SignInRefused['detail'],
  ): Promise<UserRow> {
    const link = await findRow<OidcIdentityRow>(this.models.OidcIdentity, { where: { provider_id: r.id, subject: c.subject } });
    let user = link ? await findRow<UserRow>(this.models.User, { where: { id: link.user_id } }) : null;
    if (!user && c.email) {
      const byEmail = await findRows<UserRow>(this.models.User, { where: sqlWhere(fn('lower', col('email')), c.email), limit: 2 });
      if (byEmail.length === 1) {
        if (!c.emailVerified) {
          await this.refused(r, 'email_unverified', ip, seen);
          throw new SignInRefused('email_unverified', 403, seen);
        }
        user = byEmail[0];
        await this.link(r, c.subject, user.id);
        await this.core.activity.record({
          source: 'auth',
          event_type: 'oidc_linked',
          msg: msg('oidc.account_linked', { username: user.username, provider: r.name }),
          user_id: user.id,
          ip,
        });
      }
    }
    if (!user && asBool(r.jit_create)) {
      const created = await this.core.users.create({
        username: await this.freeUsername(c.username ?? c.email?.split('@')[0] ?? `sso-${c.subject}`, r.name),
        email: c.emailVerified ? c.email : null,
        // a password nobody knows: the account signs in through its provider (an admin can reset it)
        password: generatePassword(),
        role: c.role,
      });
      user = await findRow<UserRow>(this.models.User, { where: { id: created.id } });
      await this.link(r, c.subject, created.id);
      await this.core.activity.record({
        source: 'auth',
        event_type: 'oidc_created',
        msg: msg('oidc.account_created', { username: created.username, provider: r.name, role: c.role }),
        user_id: created.id,
        ip,
      });
    }
    if (!user) {
      await this.refused(r, 'no_account', ip, seen);
      throw new SignInRefused('no_account', 403, seen);
    }
    if (user.role !== c.role) user = await this.applyRole(user, c.role);
    return user;
  }

  /** The mapping decides the role at every sign-in; the last admin keeps the admin role (users service rule). */
  private async applyRole(user: UserRow, role: Role): Promise<UserRow> {
    try {
      await this.core.users.update(user.id, { role });
      return { ...user, role };
    } catch (err) {
      if (err instanceof AppError && (err.kind === 'conflict' || err.kind === 'unprocessable')) return user;
      throw err;
    }
  }

  private async link(r: OidcProviderRow, subject: string, userId: number): Promise<void> {
    await this.models.OidcIdentity.create({ provider_id: r.id, subject, user_id: userId, created_at: this.core.clock(), last_login_at: null });
  }

  /** The claim's username when free, else with the provider's name, else numbered. */
  private async freeUsername(wanted: string, provider: string): Promise<string> {
    const base = wanted.replace(/[^A-Za-z0-9_.@-]/g, '_').slice(0, 60) || 'sso-user';
    const taken = async (n: string) =>
      (await findRows(this.models.User, { where: sqlWhere(fn('lower', col('username')), n.toLowerCase()), limit: 1 })).length > 0;
    if (!(await taken(base))) return base;
    const withProvider = `${base}-${provider.replace(/[^A-Za-z0-9_.-]/g, '_')}`.slice(0, 60);
    if (!(await taken(withProvider))) return withProvider;
    for (let i = 2; ; i++) if (!(await taken(`${withProvider}-${i}`))) return `${withProvider}-${i}`;
  }

  async refused(r: OidcProviderRow, reason: RefusalReason, ip: string | null, detail: SignInRefused['detail']): Promise<void> {
    await this.core.activity.record({
      severity: 'warning',
      source: 'auth',
      event_type: 'oidc_refused',
      msg: msg('oidc.refused', { provider: r.name, reason }),
      details: { provider_id: r.id, reason, ...detail },
      ip,
    });
  }
}
