import { isFeatureEnabled, type LicensedFeature } from '../license/features.js';
import { forbidden } from '../util/errors.js';

/** Throws 403 when the licence does not include the feature. */
export function requireFeature(feature: LicensedFeature): void {
  if (!isFeatureEnabled(feature)) throw forbidden(`This needs the licence feature ${feature}`);
}
