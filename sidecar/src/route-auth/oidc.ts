// Route auth's method `oidc`: a visitor signs in at a route through an OpenID Connect provider
// (oidc/service.ts does the protocol: discovery through the request-forgery guard, PKCE S256, state
// and nonce, the code exchange whose ID token openid-client checks). Served by the route-auth pages
// (http.ts) on the route's own host, so the session cookie is set there:
// - GET /route-auth/oidc/start?rd=: the flow (verifier, state, nonce, the checked `rd`) is stored
//   in the table route_auth_oidc_flows under its state (the verifier sealed with a key derived from
//   the master key) and bound to this browser by a random cookie `gh_ra_<routeId>_o`
//   (Path=/route-auth/, 10 minutes; only its SHA-256 is kept); the browser goes to the provider;
// - GET /route-auth/oidc/callback: the flow of this state is taken out with a delete that reports
//   whether it removed the row (single use, on every node: a replayed or tampered answer finds none,
//   and one from another browser lacks the cookie: 422 page), the code exchanged, and the visitor
//   let in when the provider's e-mail address (verified by the provider: email_verified) is in
//   allowed_emails or one of its groups in allowed_groups; else 403 with a page that says why and
//   what the provider sent. Then the route's second factor, if any (a TOTP code of the route's own
//   authenticator, or a code mailed to the provider's address), as after a
//   password (flows.ts), else the route-auth session opens: X-Auth-User the username claim (else the
//   e-mail address, else the subject), X-Auth-Email the address, X-Auth-Groups the groups.
// Since the flows are in the database, the callback may reach another node of a cluster than the
// start, and a restart forgets none. A flow lives FLOW_MAX_AGE_MS; older ones are deleted at each
// start and by the route-auth prune job (service.ts prune).
import { msg } from '@gatehouse/common/messages/index.js';
import { Op } from 'sequelize';
import type { Deps } from '../deps.js';
import { findRowByPk, findRows } from '../db/define.js';
import { FLOW_MAX_AGE_MS, ROUTE_CALLBACK_PATH, SignInRefused, VerifierSeal, type OidcFlow, type OidcService, type SignInClaims } from '../oidc/service.js';
import { listColumn } from './models.js';
import { sha256, newToken, type RouteAuthService } from './service.js';
import type { RouteEntry } from './view.js';

export const START_PATH = '/route-auth/oidc/start';
export const CALLBACK_PATH = ROUTE_CALLBACK_PATH;
export const bindingCookie = (routeId: number) => `gh_ra_${routeId}_o`;
/** Flows waiting for their callback, at most (the oldest dropped beyond): a flood of starts cannot grow the table without bound. */
const MAX_FLOWS = 10_000;
/** The longest `state` looked up (openid-client makes 43 characters; the column holds 128). */
const MAX_STATE_LENGTH = 128;

interface RouteFlow {
  flow: OidcFlow;
  routeId: number;
  /** SHA-256 of the binding cookie's value */
  binding: string;
}

/** Why a visitor was not let in (the page's wording: web/route-auth/i18n.ts). */
export type OidcError = 'oidc_unavailable' | 'oidc_state' | 'oidc_failed' | 'oidc_not_allowed' | 'expired';

export type StartResult = { kind: 'redirect'; url: string; binding: string } | { kind: 'error'; error: OidcError; status: number };

export type CallbackResult =
  | { kind: 'signed_in'; who: SignInClaims }
  | { kind: 'error'; error: OidcError; status: number; seen?: { email: string | null; groups: string[] }; detail?: string };

/** X-Auth-User of an oidc session: the username claim, else the e-mail address, else the subject. */
export const shownName = (c: SignInClaims) => c.username ?? c.email ?? c.subject;

/** Whether the route's allow-lists let these claims in: a verified address in allowed_emails, or a group in allowed_groups. */
export function allowed(entry: RouteEntry, c: SignInClaims): boolean {
  const emails = listColumn(entry.cfg.allowed_emails).map((e) => e.toLowerCase());
  const groups = new Set(listColumn(entry.cfg.allowed_groups));
  if (c.email && c.emailVerified && emails.includes(c.email.toLowerCase())) return true;
  return c.groups.some((g) => groups.has(g));
}

export class RouteOidc {
  /** The flows' PKCE verifiers in route_auth_oidc_flows, a table the backup and the key rotation leave out. */
  private readonly flowSeal: VerifierSeal;

  constructor(
    private readonly deps: Deps,
    private readonly svc: RouteAuthService,
    private readonly oidc: () => OidcService,
  ) {
    this.flowSeal = new VerifierSeal(deps.crypto, 'route-auth-oidc-flow');
  }

  private get model() {
    return this.deps.db.models.RouteAuthOidcFlow;
  }

  /** Before a new flow: the expired ones go, and beyond MAX_FLOWS - 1 waiting the oldest. */
  private async prune(now: number): Promise<void> {
    await this.model.destroy({ where: { created_at: { [Op.lt]: now - FLOW_MAX_AGE_MS } } });
    const over = (await this.model.count()) - (MAX_FLOWS - 1);
    if (over <= 0) return;
    const oldest = await findRows(this.model, { attributes: ['state'], order: [['created_at', 'ASC']], limit: over });
    await this.model.destroy({ where: { state: oldest.map((r) => r.state) } });
  }

  /**
   * The flow of `state`, taken out of the table: only the caller whose delete removed the row gets it
   * (single use across the nodes: a replay, or the same callback on two nodes at once, finds none).
   * A verifier that no longer opens (the master key rotated since the start) counts as no flow.
   */
  private async take(state: string): Promise<RouteFlow | null> {
    if (!state || state.length > MAX_STATE_LENGTH) return null;
    const row = await findRowByPk(this.model, state);
    if (!row) return null;
    if (!(await this.model.destroy({ where: { state } }))) return null;
    const verifier = this.flowSeal.open(row.verifier_enc);
    if (verifier === null) return null;
    const flow: OidcFlow = {
      state: row.state,
      nonce: row.nonce,
      verifier,
      providerId: Number(row.provider_id),
      next: row.next_url,
      redirectUri: row.redirect_uri,
      at: Number(row.created_at),
    };
    return { flow, routeId: Number(row.route_id), binding: row.binding_hash };
  }

  /** The first step: the provider's authorization URL, and the binding cookie's value to set. */
  async start(entry: RouteEntry, redirectUri: string, rd: string): Promise<StartResult> {
    const cfg = entry.cfg;
    if (cfg.method !== 'oidc' || !cfg.oidc_provider_id) return { kind: 'error', error: 'oidc_unavailable', status: 404 };
    const row = await this.oidc().enabledRow(cfg.oidc_provider_id);
    if (!row) return { kind: 'error', error: 'oidc_unavailable', status: 503 };
    let begun: { url: string; flow: OidcFlow };
    try {
      begun = await this.oidc().begin(row, redirectUri, rd);
    } catch (err) {
      if (err instanceof SignInRefused) return { kind: 'error', error: 'oidc_unavailable', status: err.status };
      throw err;
    }
    const binding = newToken();
    const { flow } = begun;
    await this.prune(this.deps.clock());
    await this.model.create({
      state: flow.state,
      route_id: entry.route.id,
      binding_hash: sha256(binding),
      provider_id: flow.providerId,
      nonce: flow.nonce,
      verifier_enc: this.flowSeal.seal(flow.verifier),
      next_url: flow.next,
      redirect_uri: flow.redirectUri,
      created_at: flow.at,
    });
    return { kind: 'redirect', url: begun.url, binding };
  }

  /**
   * The callback: the flow of `state` (single use), bound to this browser's cookie and this route;
   * the code exchange; the allow-lists. The flow's `next` is the checked rd of its start.
   */
  async callback(entry: RouteEntry, query: URLSearchParams, bindingValue: string | undefined, ip: string): Promise<CallbackResult & { rd: string }> {
    // single use: the flow is gone before anything else happens
    const f = await this.take(query.get('state') ?? '');
    const bound = !!f && !!bindingValue && f.binding === sha256(bindingValue) && f.routeId === entry.route.id;
    if (!f || !bound) {
      await this.refused(entry, ip, 'state unknown, used or from another browser');
      return { kind: 'error', error: 'oidc_state', status: 422, rd: '/' };
    }
    const rd = f.flow.next;
    let who: SignInClaims;
    try {
      ({ claims: who } = await this.oidc().exchange(f.flow, query, ip || null));
    } catch (err) {
      if (!(err instanceof SignInRefused)) throw err;
      await this.refused(entry, ip, `provider: ${err.reason}`);
      if (err.reason === 'expired') return { kind: 'error', error: 'expired', status: 400, rd };
      return { kind: 'error', error: 'oidc_failed', status: err.status, detail: err.detail.error, rd };
    }
    if (entry.cfg.method !== 'oidc' || entry.cfg.oidc_provider_id !== f.flow.providerId) {
      await this.refused(entry, ip, 'the route no longer signs in through this provider');
      return { kind: 'error', error: 'oidc_unavailable', status: 409, rd };
    }
    if (!allowed(entry, who)) {
      await this.refused(entry, ip, `${shownName(who)} not in allowed_emails or allowed_groups`, who);
      return { kind: 'error', error: 'oidc_not_allowed', status: 403, seen: { email: who.email, groups: who.groups }, rd };
    }
    return { kind: 'signed_in', who, rd };
  }

  private async refused(entry: RouteEntry, ip: string, reason: string, who?: SignInClaims): Promise<void> {
    await this.deps.activity.record({
      severity: 'warning',
      source: 'route_auth',
      event_type: 'route_auth_login_failed',
      msg: msg('route_auth.login_failed', { domain: entry.route.domain, reason: `oidc: ${reason}` }),
      details: {
        route_id: entry.route.id,
        method: 'oidc',
        reason,
        ...(who ? { user: shownName(who), email: who.email, groups: who.groups } : {}),
      },
      ip: ip || null,
    });
  }
}
