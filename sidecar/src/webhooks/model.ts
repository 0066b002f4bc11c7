// The `webhooks` and `webhook_deliveries` tables (migration 050_webhooks) as Sequelize models, next
// to the only code that uses them, registered by its feature (webhooks/feature.ts `models`).
import { DataTypes, type Sequelize } from 'sequelize';
import { defineModel, flagColumn, idColumn, msColumn, tableOpts, type M } from '../db/define.js';
import type { DeliveryStatus } from './schema.js';

export interface WebhookRow {
  id: number;
  name: string;
  url: string;
  /** JSON array of event kind names */
  events: string;
  enabled: boolean;
  /** sealed with the master key */
  secret_enc: string;
  retry_count: number;
  /** an admin allowed this webhook loopback, private ranges and this server (migration 066) */
  allow_private: boolean;
  created_at: number;
  updated_at: number;
}

export { DELIVERY_STATUSES, type DeliveryStatus } from './schema.js';

export interface WebhookDeliveryRow {
  id: number;
  webhook_id: number;
  uid: string;
  event: string;
  body: string;
  status: DeliveryStatus;
  attempts: number;
  max_attempts: number;
  next_attempt_at: number | null;
  last_attempt_at: number | null;
  response_code: number | null;
  last_error: string | null;
  duration_ms: number | null;
  created_at: number;
  updated_at: number;
}

declare module '../db/models.js' {
  interface Models {
    Webhook: M<WebhookRow>;
    WebhookDelivery: M<WebhookDeliveryRow>;
  }
}

export function defineWebhookModels(s: Sequelize): { Webhook: M<WebhookRow>; WebhookDelivery: M<WebhookDeliveryRow> } {
  const Webhook = defineModel<WebhookRow>(
    s,
    'Webhook',
    {
      id: idColumn(),
      name: DataTypes.STRING,
      url: DataTypes.STRING,
      events: DataTypes.TEXT,
      enabled: { ...flagColumn(), defaultValue: true },
      secret_enc: DataTypes.TEXT,
      retry_count: DataTypes.INTEGER,
      allow_private: flagColumn(),
      created_at: msColumn(),
      updated_at: msColumn(),
    },
    tableOpts('webhooks'),
  );
  const WebhookDelivery = defineModel<WebhookDeliveryRow>(
    s,
    'WebhookDelivery',
    {
      id: idColumn(),
      webhook_id: DataTypes.INTEGER,
      uid: DataTypes.STRING,
      event: DataTypes.STRING,
      body: DataTypes.TEXT,
      status: DataTypes.STRING,
      attempts: DataTypes.INTEGER,
      max_attempts: DataTypes.INTEGER,
      next_attempt_at: DataTypes.BIGINT,
      last_attempt_at: DataTypes.BIGINT,
      response_code: DataTypes.INTEGER,
      last_error: DataTypes.STRING,
      duration_ms: DataTypes.INTEGER,
      created_at: msColumn(),
      updated_at: msColumn(),
    },
    tableOpts('webhook_deliveries'),
  );
  return { Webhook, WebhookDelivery };
}
