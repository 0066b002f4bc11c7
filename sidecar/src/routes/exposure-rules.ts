// The rules of a route's exposure (routes/exposure.ts), checked on the merged route of a create or
// update by the routes service: internal is for HTTP routes; the chosen answer needs its page or URL;
// a redirect must not point at the route's own domain (outsiders would be sent round in a loop).
import { msg, type Msg } from '@gatehouse/common/messages/index.js';
import { coveredBy } from '../redirects/service.js';
import type { ExposureFields } from './exposure.js';

/** The field messages of what is wrong with a route's exposure ({} when nothing). */
export function exposureProblems(r: ExposureFields & { route_type: 'http' | 'l4'; domain: string }): Record<string, Msg> {
  const f: Record<string, Msg> = {};
  if (r.exposure !== 'internal') return f;
  if (r.route_type !== 'http') {
    f.exposure = msg('route.field.only_http');
    return f;
  }
  if (r.exposure_answer === 'page' && !r.exposure_page?.trim()) f.exposure_page = msg('field.required');
  if (r.exposure_answer === 'redirect') {
    if (!r.exposure_redirect_url) f.exposure_redirect_url = msg('field.required');
    else if (r.domain && coveredBy(new URL(r.exposure_redirect_url).hostname, r.domain))
      f.exposure_redirect_url = msg('redirect.field.loops', { domain: r.domain });
  }
  return f;
}
