import { msg } from '@gatehouse/common/messages/index.js';
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { actingUserId, sessionId, type Principal } from '../http/auth.js';
import { forbidden } from '../util/errors.js';
import {
  appSettingsResponse,
  clearLogsResponse,
  defaultThemeBody,
  defaultThemeResponse,
  languageBody,
  lockoutResponse,
  networkBody,
  networkResponse,
  passwordChangeBody,
  profileBody,
  profileResponse,
  securityBody,
  themeBody,
} from './schema.js';
import { okOnly } from '../http/responses.js';
import { APP_VERSION } from '../version.js';
import { networkView, saveNetwork } from './network.js';

function me(ctx: { state: { principal?: Principal } }): number {
  const id = actingUserId(ctx.state.principal);
  if (id === undefined) throw forbidden(msg('auth.token_without_user'));
  return id;
}

async function securityView(deps: AppContext) {
  return {
    lockout: { max_attempts: await deps.settings.get('security.lockout.max_attempts'), duration: await deps.settings.get('security.lockout.duration') },
    second_factor: { required: await deps.settings.get('security.second_factor.required') },
  };
}

export function settingsEndpoints(deps: AppContext): Endpoint[] {
  return [
    defineEndpoint({
      method: 'GET',
      path: '/settings/profile',
      response: profileResponse,
      selfService: true,
      summary: 'The signed-in user',
      tags: ['settings'],
      handler: async (_i, ctx) => ({ profile: await deps.users.get(me(ctx)) }),
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/settings/profile',
      response: profileResponse,
      selfService: true,
      summary: 'Update own username, email, language',
      tags: ['settings'],
      body: profileBody,
      storedChecks: async (raw, ctx) => deps.users.storedProblems({ username: raw.username }, me(ctx)),
      handler: async ({ body }, ctx) => ({ profile: await deps.users.update(me(ctx), body, me(ctx)) }),
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/settings/password',
      response: okOnly,
      selfService: true,
      summary: 'Change own password ({current, next}); other sessions end',
      tags: ['settings'],
      body: passwordChangeBody,
      storedChecks: async (raw, ctx) => deps.users.currentPasswordProblem(me(ctx), raw.current),
      handler: async ({ body }, ctx) => {
        // Ends every other session of this user, keeps the current one; clears must_change_password.
        await deps.users.changePassword(me(ctx), body.current, body.next, sessionId(ctx));
        return {};
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/settings/language',
      response: profileResponse,
      selfService: true,
      summary: 'Set own language (de or en)',
      tags: ['settings'],
      body: languageBody,
      handler: async ({ body }, ctx) => ({ profile: await deps.users.update(me(ctx), { language: body.language }, me(ctx)) }),
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/settings/theme',
      response: profileResponse,
      selfService: true,
      summary: 'Own theme (pro, default, or null for the server default)',
      tags: ['settings'],
      body: themeBody,
      handler: async ({ body }, ctx) => ({ profile: await deps.users.update(me(ctx), { theme: body.theme }, me(ctx)) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/settings/app',
      response: appSettingsResponse,
      summary: 'Application settings and facts for the UI',
      tags: ['settings'],
      handler: async () => ({
        app: {
          name: 'Gatehouse',
          version: APP_VERSION,
          default_theme: await deps.settings.get('ui.default_theme'),
          default_language: await deps.settings.get('ui.default_language'),
          token_prefix: 'gth',
          fingerprint_header: 'X-Machine-Fingerprint',
          wireguard: { interface: deps.config.wg.iface, port: deps.config.wg.port, subnet: deps.config.wg.subnet, public_host: deps.publicHost.configured() },
          public_host: deps.publicHost.current(),
          dns_domain: deps.config.dnsDomain,
          tls: deps.publicHost.tls().value,
          admin_domain: deps.config.adminDomain ?? null,
          security: {
            lockout: { max_attempts: await deps.settings.get('security.lockout.max_attempts'), duration: await deps.settings.get('security.lockout.duration') },
          },
        },
      }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/settings/network',
      response: networkResponse,
      adminRole: true,
      summary:
        "Network settings: this server's public host and IPv4, TLS mode and ACME e-mail; each the effective value, where it comes from (settings | env | hostname) and what the settings and the environment say",
      tags: ['settings'],
      handler: () => ({ network: networkView(deps) }),
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/settings/network',
      response: networkResponse,
      adminRole: true,
      scope: null,
      summary:
        'Store Network settings ({public_host?, public_ip?, tls_mode?, acme_email?}; null falls back to the environment, a field left out keeps its value); overrides GATEHOUSE_PUBLIC_HOST, _PUBLIC_IP, _TLS, _ACME_EMAIL; peer configs handed out with another endpoint become config_outdated',
      tags: ['settings'],
      body: networkBody,
      handler: async ({ body }, ctx) => ({ network: await saveNetwork(deps, body, actingUserId(ctx.state.principal) ?? null) }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/settings/network/skip-setup',
      response: networkResponse,
      adminRole: true,
      scope: null,
      summary: 'Skip the first-sign-in Network step (remembered; the environment and the hostname keep applying)',
      tags: ['settings'],
      handler: async (_i, ctx) => {
        await deps.publicHost.skipSetup();
        await deps.events.emit({ type: 'settings_changed', section: 'network_setup_skipped', actor: actingUserId(ctx.state.principal) ?? null });
        return { network: networkView(deps) };
      },
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/settings/default-theme',
      response: defaultThemeResponse,
      summary: 'Server-wide default theme (pro or default)',
      tags: ['settings'],
      body: defaultThemeBody,
      handler: async ({ body }, ctx) => {
        await deps.settings.set('ui.default_theme', body.theme);
        await deps.events.emit({ type: 'settings_changed', section: 'default_theme', theme: body.theme, actor: actingUserId(ctx.state.principal) ?? null });
        return { theme: body.theme };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/settings/security',
      response: lockoutResponse,
      summary: 'Sign-in security: the lockout (security.lockout.max_attempts, .duration in minutes) and the second-factor policy (second_factor.required)',
      tags: ['settings'],
      handler: () => securityView(deps),
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/settings/security',
      response: lockoutResponse,
      summary:
        'Change sign-in security ({lockout?: {max_attempts?, duration? (minutes)}, second_factor?: {required}}). With second_factor.required, every account without a second factor enrols at its next sign-in; sessions open now stay open',
      tags: ['settings'],
      body: securityBody,
      handler: async ({ body }, ctx) => {
        if (body.lockout?.max_attempts !== undefined) await deps.settings.set('security.lockout.max_attempts', body.lockout.max_attempts);
        if (body.lockout?.duration !== undefined) await deps.settings.set('security.lockout.duration', body.lockout.duration);
        if (body.second_factor) await deps.settings.set('security.second_factor.required', body.second_factor.required);
        await deps.events.emit({
          type: 'settings_changed',
          section: 'security',
          ...(body.lockout ? { lockout: body.lockout } : {}),
          ...(body.second_factor ? { second_factor_required: body.second_factor.required } : {}),
          actor: actingUserId(ctx.state.principal) ?? null,
        });
        return securityView(deps);
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/settings/clear-logs',
      response: clearLogsResponse,
      summary: 'Clear the activity log and the access log',
      tags: ['settings'],
      handler: async (_i, ctx) => {
        const activity = await deps.activity.clear();
        const access = await deps.accessLog.clear();
        await deps.activity.record({
          severity: 'warning',
          source: 'settings',
          event_type: 'logs_cleared',
          msg: msg('settings.logs_cleared'),
          details: { activity, access },
          user_id: actingUserId(ctx.state.principal),
        });
        return { cleared: { activity, access } };
      },
    }),
  ];
}
