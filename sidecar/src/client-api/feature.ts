// The desktop client API feature: /api/v1/client/* (except RDP), the machines of a client token and
// the client settings. The service is ctx.clientMachines (app-context.ts); it has no background work.
import type { Feature } from '../feature.js';
import { defineClientModels } from './model.js';
import { clientApiEndpoints } from './endpoints.js';

export const clientApiFeature: Feature = {
  name: 'client-api',
  models: defineClientModels,
  endpoints: (ctx) => clientApiEndpoints(ctx),
};
