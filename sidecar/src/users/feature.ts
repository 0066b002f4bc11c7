// The users feature: /users (users/endpoints.ts). The service is ctx.users, built with the platform.
import type { Feature } from '../feature.js';
import { userEndpoints } from './endpoints.js';

export const usersFeature: Feature = {
  name: 'users',
  endpoints: (ctx) => userEndpoints(ctx),
};
