// A message as data, as the API carries it: {code, params?}. The error bodies (`code`, `params`,
// `field_codes`), the activity rows (`code`, `params`) and the reasons (`*_code`) use it.
import { z } from 'zod';

export const messageParams = z.record(z.string(), z.unknown()).meta({ description: 'the parameters of the message, by name (absent when it has none)' });

/** Beside a per-item `error` text (a batch's results): its code and parameters. */
export const itemMessageFields = {
  code: z
    .string()
    .optional()
    .meta({ description: "the error as a code of the message catalogue (beside `error`, its English text); a client words it in its reader's language" }),
  params: messageParams.optional(),
};

export const messageRefSchema = z
  .object({
    code: z.string().meta({ description: 'a stable code of the message catalogue (docs/reference/errors.md lists them)' }),
    params: messageParams.optional(),
  })
  .meta({ description: "a message as data: its code and parameters; a client words it in its reader's language" });
