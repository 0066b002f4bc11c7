// The settings feature: /settings/* (settings/endpoints.ts; /settings/monitoring is the resilience
// feature's). The store is ctx.settings, built with the platform.
import type { Feature } from '../feature.js';
import { settingsEndpoints } from './endpoints.js';

export const settingsFeature: Feature = {
  name: 'settings',
  endpoints: (ctx) => settingsEndpoints(ctx),
};
