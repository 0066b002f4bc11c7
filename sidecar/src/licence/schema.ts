// Request and response schemas of the licence endpoints (validation and the OpenAPI document).
import { z } from 'zod';
import { messageRefSchema } from '@gatehouse/common/messages/ref.js';
import { LICENSED_FEATURES } from '../http/feature-gate.js';

export const activateBody = z.strictObject({
  key: z
    .string()
    .max(16_384, 'at most 16384 characters')
    .regex(/^\s*GHL1\.[0-9a-f]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\s*$/, 'not a Gatehouse licence key: expected GHL1.<key id>.<document>.<signature>')
    .trim()
    .min(1, 'required')
    .meta({ description: 'the licence key (GHL1.<key id>.<document>.<signature>)' }),
});

const isoDate = z.string().meta({ format: 'date-time' });
const limits = z.object({
  max_peers: z.number().int().nullable().meta({ description: 'null: no limit' }),
  max_routes: z.number().int().nullable().meta({ description: 'null: no limit' }),
});
const feature = z.enum(LICENSED_FEATURES);

/**
 * - community: no licence stored
 * - active: the licence is in force
 * - grace: in force, but the licence service could not be reached at the last refresh
 * - grace_ended / expired / revoked / invalid: stored but not in force (community fallback);
 *   invalid = no longer verifies (its signing key is not trusted any more)
 */
const licenceStatus = z.enum(['community', 'active', 'grace', 'grace_ended', 'expired', 'revoked', 'invalid']);
export type LicenceStatus = z.infer<typeof licenceStatus>;

/** The licence state as the API shows it. */
export const licenceView = z
  .object({
    status: licenceStatus.meta({
      description:
        'community: no licence; active; grace: in force while the licence service cannot be reached; grace_ended, expired, revoked, invalid: stored but not in force (community fallback)',
    }),
    plan: z.string().meta({ description: 'the plan that applies now' }),
    features: z.array(feature).meta({ description: 'the features on now: the community set, plus what a licence in force adds (cluster)' }),
    limits,
    licence: z
      .object({
        id: z.string(),
        customer: z.string(),
        plan: z.string(),
        features: z.array(z.string()).meta({ description: 'as the document names them (unknown names are ignored)' }),
        limits,
        issued_at: isoDate,
        expires_at: isoDate.nullable(),
        key_id: z.string().meta({ description: 'id of the key that signed it' }),
        activated_at: isoDate,
        last_refresh_at: isoDate.nullable(),
        last_ok_at: isoDate.meta({ description: 'last confirmation by the licence service (or the activation)' }),
        last_refresh_error: z.string().nullable(),
        last_refresh_error_code: messageRefSchema
          .nullable()
          .meta({ description: "last_refresh_error as a message: licence.service.* with the licence service's own words as `detail`" }),
      })
      .nullable()
      .meta({ description: 'the stored licence, also when it is not in force; null without one' }),
    grace: z
      .object({ since: isoDate, ends_at: isoDate, days: z.number().int() })
      .nullable()
      .meta({ description: 'set while the licence service cannot be reached' }),
    refresh: z.object({ url_configured: z.boolean(), every_hours: z.number().int(), grace_days: z.number().int() }),
    community: z.object({ plan: z.string(), features: z.array(feature), limits }).meta({
      description:
        'the community fallback: what every server has without a licence (internal_dns, remote_desktop, circuit_breaker, prometheus_metrics; no limits)',
    }),
  })
  .meta({ description: 'The licence state' });

export type LicenceView = z.infer<typeof licenceView>;

/** What a refresh did: asked the licence service, or found none configured. */
const refreshOutcome = z.object({
  checked: z.enum(['service', 'offline']),
  ok: z.boolean(),
  error: z.string().nullable(),
  error_code: messageRefSchema.nullable().meta({ description: "error as a message: licence.service.* with the licence service's own words as `detail`" }),
});
export type RefreshOutcome = z.infer<typeof refreshOutcome>;

export const licenceResponse = z.object({ ok: z.literal(true), license: licenceView });
export const refreshResponse = z.object({
  ok: z.literal(true),
  license: licenceView,
  refresh: refreshOutcome,
});
export const removeResponse = z.object({ ok: z.literal(true), removed: z.boolean(), license: licenceView });
