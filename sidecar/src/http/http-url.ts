// An absolute http(s) URL as a request field (redirect hosts, the default site, an internal route's
// answer for outsiders): a leaf module, so route and redirect schemas can both use it.
import { text, UNPROCESSABLE } from './fields.js';

/**
 * An absolute http(s) URL. Braces are refused: Caddy reads `{…}` in a Location header as a
 * placeholder. The scheme and the braces are in the pattern (400); what else makes a URL (parsing,
 * a host, no credentials) is a 422, as for webhook URLs.
 */
export const httpUrl = (description: string) =>
  text({ min: 1, max: 2048 })
    .superRefine((v, ctx) => {
      if (!/^https?:\/\//i.test(v)) {
        ctx.addIssue({ code: 'custom', message: 'must start with http:// or https://' });
        return;
      }
      if (/[{}]/.test(v)) {
        ctx.addIssue({ code: 'custom', message: 'must not contain { or }' });
        return;
      }
      let u: URL;
      try {
        u = new URL(v);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be an http(s) URL such as https://www.example.com/', params: UNPROCESSABLE });
        return;
      }
      if (u.username || u.password) ctx.addIssue({ code: 'custom', message: 'must not contain a user name or password', params: UNPROCESSABLE });
      else if (!u.hostname) ctx.addIssue({ code: 'custom', message: 'must name a host', params: UNPROCESSABLE });
    })
    .meta({ pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\u0000-\\u001f\\u007f-\\u009f\\ud800-\\udfff{}]*$', description })
    // stored as the URL standard serializes it: an internationalized host as punycode, the rest percent-encoded (a Location header is ASCII)
    .transform((v) => {
      try {
        return new URL(v).href;
      } catch {
        return v;
      }
    });
