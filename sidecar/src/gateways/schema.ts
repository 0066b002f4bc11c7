// Query schemas of the gateways API (zod); the companion's bodies are the shared gateway protocol's
// (@gatehouse/common/gateway-protocol.js).
import { z } from 'zod';
import { CONFIG_HASH_RE } from '@gatehouse/common/gateway-protocol.js';

export const checkQuery = z.object({ hash: z.string().regex(CONFIG_HASH_RE, 'must be sha256: followed by 64 hex digits').optional() });

/** POST /gateway/probe echoes any body (JSON or raw bytes). */
export const probeBody = z.unknown();

/** POST /gateway/probe with a JSON body: the body echoed with its size and the server's clock. */
export const probeResponse = z.strictObject({
  ok: z.literal(true),
  peer_id: z.number().int(),
  echo: z.unknown().describe('the JSON body as received (null for none)'),
  bytes: z.number().int().min(0).describe('length of the JSON text of echo'),
  server_time: z.number().int().describe('epoch milliseconds'),
});
