// The SMTP feature: deps.smtp (settings) and deps.mailer (what other features send mail with).
import type { Feature } from '../features.js';
import { SmtpService } from './service.js';
import { smtpEndpoints } from './endpoints.js';

export const smtpFeature: Feature = {
  name: 'smtp',
  setup(deps) {
    const svc = new SmtpService(deps.settings, deps.crypto, deps.activity);
    deps.smtp = svc;
    deps.mailer = svc;
  },
  endpoints: (deps) => smtpEndpoints(deps),
};
