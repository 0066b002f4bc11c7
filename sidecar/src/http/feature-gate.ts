// The licence feature gate as the HTTP kit sees it: the feature names an endpoint may need
// (Endpoint.feature), the gate that answers whether one is on (the container's `features`, the
// LicenceService: licence/service.ts), and the 403 of an endpoint whose feature is off. http/app.ts
// checks it in one place; http/openapi.ts documents it. What a licence grants: licence/features.ts.
import { msg } from '@gatehouse/common/messages/index.js';
import { AppError } from '../util/errors.js';

/** Every feature name a gate knows, in display order. */
export const LICENSED_FEATURES = ['internal_dns', 'remote_desktop', 'circuit_breaker', 'prometheus_metrics', 'cluster'] as const;
export type LicensedFeature = (typeof LICENSED_FEATURES)[number];

/** Answers whether the current licence includes a feature (a service of the container: AppContext.features). */
export interface FeatureGate {
  isEnabled(feature: LicensedFeature): boolean;
}

/** The 403 an endpoint answers when its feature is off: {ok:false, error, feature}. */
export function featureDisabled(feature: LicensedFeature): AppError {
  return new AppError('forbidden', msg('licence.feature_required', { feature }), undefined, { feature });
}
