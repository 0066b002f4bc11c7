import { DataTypes, type QueryInterface } from 'sequelize';

// Outbound webhooks (owned by src/webhooks/): the webhooks, and the delivery queue + log. A delivery
// is a row written when an event is enqueued and updated after every attempt; the worker sends the
// rows whose status is pending and whose next_attempt_at has come, so a queued delivery survives a
// restart or a kill -9. Deleting a webhook deletes its deliveries.
const ms = () => ({ type: DataTypes.BIGINT, allowNull: false });

export const name = '050_webhooks';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.createTable('webhooks', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    name: { type: DataTypes.STRING(128), allowNull: false },
    url: { type: DataTypes.STRING(2048), allowNull: false },
    /** JSON array of event kind names (webhooks/events.ts WEBHOOK_EVENTS) */
    events: { type: DataTypes.TEXT, allowNull: false },
    enabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    /** the HMAC secret, sealed with the master key (util/crypto.ts); never returned by the API */
    secret_enc: { type: DataTypes.TEXT, allowNull: false },
    /** retries after a failed first attempt (attempts = 1 + retry_count) */
    retry_count: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 3 },
    created_at: ms(),
    updated_at: ms(),
  });
  await qi.createTable('webhook_deliveries', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    webhook_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'webhooks', key: 'id' }, onDelete: 'CASCADE' },
    /** uuid, sent as X-Gatehouse-Delivery (the receiver's de-duplication key) */
    uid: { type: DataTypes.STRING(36), allowNull: false, unique: true },
    /** the event kind (or "webhook_test") */
    event: { type: DataTypes.STRING(64), allowNull: false },
    /** the exact request body sent on every attempt */
    body: { type: DataTypes.TEXT, allowNull: false },
    /** pending | delivered | failed */
    status: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'pending' },
    attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    /** 1 + the webhook's retry_count when enqueued */
    max_attempts: { type: DataTypes.INTEGER, allowNull: false },
    /** epoch ms when the next attempt is due (null once delivered or failed) */
    next_attempt_at: { type: DataTypes.BIGINT, allowNull: true },
    last_attempt_at: { type: DataTypes.BIGINT, allowNull: true },
    /** HTTP status of the last attempt (null: no answer) */
    response_code: { type: DataTypes.INTEGER, allowNull: true },
    last_error: { type: DataTypes.STRING(512), allowNull: true },
    /** duration of the last attempt */
    duration_ms: { type: DataTypes.INTEGER, allowNull: true },
    created_at: ms(),
    updated_at: ms(),
  });
  await qi.addIndex('webhook_deliveries', ['status', 'next_attempt_at'], { name: 'webhook_deliveries_due' });
  await qi.addIndex('webhook_deliveries', ['webhook_id', 'id'], { name: 'webhook_deliveries_webhook' });
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.dropTable('webhook_deliveries');
  await qi.dropTable('webhooks');
}
