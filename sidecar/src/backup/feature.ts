// The backup feature: backup download and restore, and the auto-backup jobs (scheduled once the
// server listens, cancelled on shutdown). The service is ctx.backup (app-context.ts).
import type { Feature } from '../feature.js';
import { defineBackupModels } from './model.js';
import { backupEndpoints } from './endpoints.js';

export const backupFeature: Feature = {
  name: 'backup',
  models: defineBackupModels,
  endpoints: (ctx) => backupEndpoints(ctx),
  start: (ctx) => ctx.backup.start(),
  stop: (ctx) => ctx.backup.stop(),
};
