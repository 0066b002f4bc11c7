// Licence feature gates. The endpoint registry names the feature an endpoint needs (Endpoint.feature)
// and http/app.ts enforces it in one place by asking the container's FeatureGate; other gated code
// paths ask the same gate. The default gate is isFeatureEnabled, so the licensing issue only has to
// change this one function. Until licences exist every feature is on.
import { AppError } from '../util/errors.js';

export const LICENSED_FEATURES = ['internal_dns', 'remote_desktop', 'circuit_breaker', 'prometheus_metrics'] as const;
export type LicensedFeature = (typeof LICENSED_FEATURES)[number];

export function isFeatureEnabled(_feature: LicensedFeature): boolean {
  return true;
}

/** Answers whether the current licence includes a feature (a service of the container: AppContext.features). */
export interface FeatureGate {
  isEnabled(feature: LicensedFeature): boolean;
}

/** Today's gate: isFeatureEnabled. */
export const licenceFeatureGate: FeatureGate = { isEnabled: isFeatureEnabled };

/** The 403 an endpoint answers when its feature is off: {ok:false, error, feature}. */
export function featureDisabled(feature: LicensedFeature): AppError {
  return new AppError('forbidden', `This needs the licence feature ${feature}`, undefined, { feature });
}
