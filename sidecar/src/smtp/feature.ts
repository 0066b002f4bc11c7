// The SMTP feature: the SMTP settings endpoints. The services are ctx.smtp (settings) and
// ctx.mailer (what other features send mail with), built in app-context.ts.
import type { Feature } from '../feature.js';
import { smtpEndpoints } from './endpoints.js';

export const smtpFeature: Feature = {
  name: 'smtp',
  endpoints: (ctx) => smtpEndpoints(ctx),
};
