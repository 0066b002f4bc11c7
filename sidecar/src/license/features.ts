// Licence feature gates and the community fallback (README "Licence").
//
// The endpoint registry names the feature an endpoint needs (Endpoint.feature) and http/app.ts
// enforces it in one place by asking the container's FeatureGate (ctx.features, the LicenceService);
// every other gated code path (the Caddy renderer via the render context, the internal DNS hosts
// file, route writes that turn the circuit breaker on) asks the same gate. isFeatureEnabled answers
// for a given licence state, pure.
//
// COMMUNITY is THE community fallback: what a server without a valid licence has (none stored,
// removed, expired, revoked, or the refresh grace period ended). It has none of the licensed
// features and no size limits.
import { AppError } from '../util/errors.js';
import type { LicenceLimits } from './document.js';

export const LICENSED_FEATURES = ['internal_dns', 'remote_desktop', 'circuit_breaker', 'prometheus_metrics'] as const;
export type LicensedFeature = (typeof LICENSED_FEATURES)[number];

/** What a licence grants: the plan's name, its features and its limits (null = no limit). */
export interface Entitlements {
  plan: string;
  features: readonly LicensedFeature[];
  limits: LicenceLimits;
}

/** The community fallback, defined here and nowhere else. */
export const COMMUNITY: Entitlements = Object.freeze({
  plan: 'community',
  features: Object.freeze([] as LicensedFeature[]),
  limits: Object.freeze({ max_peers: null, max_routes: null }),
});

/** Whether the entitlements (a licence's, or COMMUNITY when there is none) include the feature. */
export function isFeatureEnabled(entitlements: Entitlements | null | undefined, feature: LicensedFeature): boolean {
  return (entitlements ?? COMMUNITY).features.includes(feature);
}

/** The licensed features a document names (unknown names are ignored), in LICENSED_FEATURES order. */
export function knownFeatures(names: readonly string[]): LicensedFeature[] {
  return LICENSED_FEATURES.filter((f) => names.includes(f));
}

/** Answers whether the current licence includes a feature (a service of the container: AppContext.features). */
export interface FeatureGate {
  isEnabled(feature: LicensedFeature): boolean;
}

/** A gate for fixed entitlements (COMMUNITY, a render without a licence service). */
export function gateOf(e: Entitlements): FeatureGate {
  return { isEnabled: (f) => isFeatureEnabled(e, f) };
}

/** The 403 an endpoint answers when its feature is off: {ok:false, error, feature}. */
export function featureDisabled(feature: LicensedFeature): AppError {
  return new AppError('forbidden', `This needs the licence feature ${feature}`, undefined, { feature });
}

export type LimitName = keyof LicenceLimits;

/** The 403 of a write that would go beyond a licence limit: {ok:false, error, limit, max}. */
export function limitReached(limit: LimitName, max: number, what: string): AppError {
  return new AppError('forbidden', `The licence allows at most ${max} ${what}; remove one or extend the licence`, undefined, { limit, max });
}
