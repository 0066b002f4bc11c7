// The web pages feature: the sign-in page (web/index.ts), its second-factor and enrolment steps
// (web/second-factor.ts), the passkey scripts of both (web/passkey.ts), the password page (web/password.ts), the
// API reference (web/api-docs.ts) and the admin app (web/spa.ts), mounted after the router in this
// order: each answers only the paths it serves and passes the rest on. Listed in
// http/served-paths.ts, which puts them in the OpenAPI document.
import type { Feature } from '../feature.js';
import { webMiddleware } from './index.js';
import { passwordPageMiddleware } from './password.js';
import { secondFactorPagesMiddleware } from './second-factor.js';
import { passkeyScriptsMiddleware } from './passkey.js';
import { apiDocsMiddleware } from './api-docs.js';
import { spaMiddleware } from './spa.js';

export const webFeature: Feature = {
  name: 'web',
  late: (ctx) => [
    webMiddleware(ctx),
    secondFactorPagesMiddleware(ctx),
    passkeyScriptsMiddleware(),
    passwordPageMiddleware(ctx),
    apiDocsMiddleware(ctx),
    spaMiddleware(ctx),
  ],
};
