// The webhooks feature: its endpoints, and the delivery worker (started with the server, stopped
// before the database closes). Services: ctx.webhooks (CRUD, log, test) and ctx.webhookQueue (the
// queue in the database and its worker), built in app-context.ts.
import type { Feature } from '../feature.js';
import { defineWebhookModels } from './model.js';
import { webhookEndpoints } from './endpoints.js';

export const webhooksFeature: Feature = {
  name: 'webhooks',
  models: defineWebhookModels,
  endpoints: (ctx) => webhookEndpoints(ctx),
  start(ctx) {
    ctx.webhookQueue.start();
  },
  async stop(ctx) {
    await ctx.webhookQueue.stop();
  },
};
