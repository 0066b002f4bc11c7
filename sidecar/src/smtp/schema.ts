// Request and response schemas of the SMTP settings API (zod).
import { z } from 'zod';
import { text } from '../http/fields.js';
import { HOST_NAME, IPV4, IPV6, isIPAddress, whole } from '../http/patterns.js';
import { fieldText } from '../http/messages.js';

const email = z.string().trim().max(254).email(fieldText('field.email'));
const hostname = z
  .string()
  .regex(whole(`\\s*(?:${IPV4}|${IPV6}|(?=[^\\s]{1,253}\\s*$)${HOST_NAME})\\s*`), 'must be a host name or IP address')
  .trim()
  .min(1, 'required')
  .max(253)
  .refine(
    (v) => isIPAddress(v) || /^(?=.{1,253}$)([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(v),
    'must be a host name or IP address',
  );
/** "user@example.com" or "Display Name <user@example.com>" */
const EMAIL = z.regexes.email.source.replace(/^\^/, '').replace(/\$$/, '');
const fromAddress = z
  .string()
  .regex(new RegExp(`^\\s*(?:${EMAIL}|[^<>\\r\\n]*<${EMAIL}>)\\s*$`), 'must be an email address or "Name <address>"')
  .trim()
  .min(1, 'required')
  .max(320)
  .refine((v) => {
    const m = /^([^<>\r\n]*)<([^<>\s]+)>$/.exec(v);
    const addr = m ? m[2] : v;
    return email.safeParse(addr).success;
  }, 'must be an email address or "Name <address>"');

export const smtpBody = z.strictObject({
  host: hostname,
  port: z.number().int().min(1).max(65535),
  secure: z.boolean().default(false),
  user: text({ max: 254, trim: false }).nullable().optional(),
  /** omitted or '': keep the stored one; null: remove it; otherwise: replace it */
  password: z.string().max(1024).nullable().optional(),
  from: fromAddress,
});

export type SmtpInput = z.output<typeof smtpBody>;

export const smtpTestBody = z.strictObject({ to: email });

/** The SMTP settings as the API shows them (never the password). */
const smtpView = z.object({
  configured: z.boolean(),
  host: z.string().nullable(),
  port: z.number().int().nullable(),
  secure: z.boolean(),
  user: z.string().nullable(),
  password_set: z.boolean(),
  from: z.string().nullable(),
});
export type SmtpView = z.infer<typeof smtpView>;
export const smtpResponse = z.object({ ok: z.literal(true), smtp: smtpView });
export const smtpTestResponse = z.object({ ok: z.literal(true), sent: z.literal(true), message_id: z.string(), accepted: z.array(z.string()) });
