// Query schemas of the gateways API (zod); the companion's bodies are the shared gateway protocol's
// (@gatehouse/common/gateway-protocol.js).
import { z } from 'zod';
import { CONFIG_HASH_RE, gatewayConfig } from '@gatehouse/common/gateway-protocol.js';
import { messageRefSchema } from '@gatehouse/common/messages/ref.js';

export const checkQuery = z.strictObject({ hash: z.string().regex(CONFIG_HASH_RE, 'must be sha256: followed by 64 hex digits').optional() });

/** POST /gateway/probe echoes any body (JSON or raw bytes). */
export const probeBody = z
  .union([z.record(z.string(), z.unknown()), z.array(z.unknown())])
  .meta({ description: 'any JSON object or array (echoed); any other Content-Type is echoed byte for byte' });

/** POST /gateway/probe with a JSON body: the body echoed with its size and the server's clock. */
export const probeResponse = z.strictObject({
  ok: z.literal(true),
  peer_id: z.number().int(),
  echo: z.unknown().describe('the JSON body as received (null for none)'),
  bytes: z.number().int().min(0).describe('length of the JSON text of echo'),
  server_time: z.number().int().describe('epoch milliseconds'),
});

const gwStatus = z.enum(['online', 'offline', 'unknown']);
const statusDetail = z.looseObject({ code: z.string() }).meta({ description: 'why, as data (code and figures): gateways/state.ts StatusDetail' });
/** One gateway peer as GET /gateways serves it. */
export const gatewayView = z.object({
  peer_id: z.number().int(),
  name: z.string(),
  hostname: z.string().nullable(),
  hostname_source: z.enum(['admin', 'agent']),
  ip: z.string(),
  enabled: z.union([z.literal(1), z.literal(0)]),
  api_port: z.number().int(),
  status: gwStatus,
  status_reason: z.string(),
  status_detail: statusDetail,
  status_reason_code: messageRefSchema.meta({ description: 'status_reason as a message of the catalogue: {code, params} (gateway.status.*)' }),
  status_changed_at: z.number().int().nullable(),
  last_seen_at: z.number().int().nullable(),
  health: z.looseObject({}).nullable().meta({ description: 'the last heartbeat' }),
  config_hash: z.string(),
  reported_config_hash: z.string().nullable(),
  config_in_sync: z.boolean().nullable(),
  traffic: z.looseObject({ at: z.number().int() }).nullable(),
  tokens_issued_at: z.number().int().nullable(),
  token_hint: z.string().nullable(),
  routes: z.array(
    z.object({
      id: z.number().int(),
      domain: z.string(),
      route_type: z.enum(['http', 'l4']),
      target_lan_host: z.string().nullable(),
      target_lan_port: z.number().int().nullable(),
      enabled: z.boolean(),
      wol_enabled: z.boolean(),
    }),
  ),
});
export type GatewayView = z.infer<typeof gatewayView>;
export const gatewaysResponse = z.object({ ok: z.literal(true), gateways: z.array(gatewayView) });
/** GET /peers/:id/gateway-info: a gateway peer's status and last health. */
export const gatewayInfo = z.object({
  peer_id: z.number().int(),
  status: gwStatus,
  status_reason: z.string(),
  status_detail: statusDetail,
  status_reason_code: messageRefSchema.meta({ description: 'status_reason as a message of the catalogue: {code, params} (gateway.status.*)' }),
  api_port: z.number().int(),
  last_seen_at: z.number().int().nullable(),
  health: z
    .looseObject({
      uptime_s: z.number().optional(),
      wg_handshake_age_s: z.number().nullable().optional(),
      route_reachability: z.array(z.unknown()),
      telemetry: z.unknown(),
    })
    .nullable(),
});
export type GatewayInfo = z.infer<typeof gatewayInfo>;
export const gatewayInfoResponse = z.object({ ok: z.literal(true), gateway: gatewayInfo });
/** A gateway's companion credentials and its gateway.env, shown once (at creation and rotation). */
export const issuedTokens = z.object({
  apiToken: z.string().meta({ description: 'the companion authenticates to this server with it (gthgw_...)' }),
  pushToken: z.string().meta({ description: 'this server authenticates to the companion with it (gthgp_...)' }),
  envContent: z.string().meta({ description: 'gateway.env for the companion, holding both tokens' }),
});
export type IssuedTokens = z.infer<typeof issuedTokens>;
export const gatewayRotateResponse = z.object({
  ok: z.literal(true),
  peer_id: z.number().int(),
  gateway: issuedTokens,
});

/** gateways/config.ts buildGatewayConfig + config_hash: what a companion receives (the shape is the companion's contract, in common). */
export const gatewayConfigResponse = z.object({ ok: z.literal(true), ...gatewayConfig.shape, config_hash: z.string() });
export const gatewayCheckResponse = z
  .object({ ok: z.literal(true), changed: z.literal(true), config_hash: z.string() })
  .meta({ description: '200 only when the hash changed (304 without a body otherwise)' });
export const gatewayStatusResponse = z.object({ ok: z.literal(true), received_at: z.number().int().meta({ description: 'epoch ms' }) });
/** What POST /gateway/heartbeat answers (without ok). */
export const heartbeatResult = z.object({
  status: gwStatus,
  status_reason: z.string(),
  config_hash: z.string(),
  config_changed: z.boolean(),
  hostname: z.object({ applied: z.boolean(), reason: z.string().optional() }),
});
export type HeartbeatResult = z.infer<typeof heartbeatResult>;
export const gatewayHeartbeatResponse = z.object({ ok: z.literal(true), ...heartbeatResult.shape });
