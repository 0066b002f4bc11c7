// Building blocks for Endpoint.response (the success bodies the OpenAPI document declares).
import { z } from 'zod';

/** A success body with nothing but {ok: true}. */
export const okOnly = z.object({ ok: z.literal(true) });

/** {ok: true, ...shape}. */
export const okWith = <T extends z.ZodRawShape>(shape: T) => z.object({ ok: z.literal(true), ...shape });
