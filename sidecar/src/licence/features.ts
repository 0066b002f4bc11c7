// Licence feature gates and the community fallback (docs/guides/licence.md).
//
// The endpoint registry names the feature an endpoint needs (Endpoint.feature) and http/app.ts
// enforces it in one place by asking the container's FeatureGate (ctx.features, the LicenceService);
// every other gated code path (the Caddy renderer via the render context, the internal DNS hosts
// file, route writes that turn the circuit breaker on) asks the same gate. isFeatureEnabled answers
// for a given licence state, pure.
//
// COMMUNITY is THE community fallback: what a server without a valid licence has (none stored,
// removed, expired, revoked, or the refresh grace period ended). It has every feature the product names
// (COMMUNITY_FEATURES: internal DNS, remote desktop, circuit breaker, Prometheus metrics) and no size
// limits. A licence grants what lies beyond it: the features outside the community set (`cluster`:
// several edges on one database, reserved for the cluster work) and, where a vendor sells them,
// limits. What a licence in force grants is the community set plus the licence's own features.
import { msg } from '@gatehouse/common/messages/index.js';
import { AppError } from '../util/errors.js';
import type { LicenceLimits } from './document.js';
import { LICENSED_FEATURES, type LicensedFeature } from '../http/feature-gate.js';

// The gate's vocabulary lives in the HTTP kit, which enforces it (http/feature-gate.ts).
export { LICENSED_FEATURES, featureDisabled, type FeatureGate, type LicensedFeature } from '../http/feature-gate.js';

/** The features every server has, with or without a licence (the API's features). */
export const COMMUNITY_FEATURES: readonly LicensedFeature[] = Object.freeze([
  'internal_dns',
  'remote_desktop',
  'circuit_breaker',
  'prometheus_metrics',
] as LicensedFeature[]);

/** What a licence grants: the plan's name, its features and its limits (null = no limit). */
export interface Entitlements {
  plan: string;
  features: readonly LicensedFeature[];
  limits: LicenceLimits;
}

/** The community fallback, defined here and nowhere else. */
export const COMMUNITY: Entitlements = Object.freeze({
  plan: 'community',
  features: COMMUNITY_FEATURES,
  limits: Object.freeze({ max_peers: null, max_routes: null }),
});

/** Whether the entitlements (a licence's, or COMMUNITY when there is none) include the feature. */
export function isFeatureEnabled(entitlements: Entitlements | null | undefined, feature: LicensedFeature): boolean {
  return (entitlements ?? COMMUNITY).features.includes(feature);
}

/** What a licence in force grants: the community set plus the features its document names (unknown names are ignored), in LICENSED_FEATURES order. */
export function grantedFeatures(names: readonly string[]): LicensedFeature[] {
  return LICENSED_FEATURES.filter((f) => COMMUNITY.features.includes(f) || names.includes(f));
}

export type LimitName = keyof LicenceLimits;

/** The 403 of a write that would go beyond a licence limit: {ok:false, error, limit, max}. */
export function limitReached(limit: LimitName, max: number, what: 'peers' | 'routes'): AppError {
  return new AppError('forbidden', msg('licence.limit_reached', { max, what }), undefined, { limit, max });
}
