// Admin UI pages served on the sidecar port: the login page and the app shell. No external
// resources; German and English by Accept-Language (or the user's language once signed in).
import type Koa from 'koa';
import type { Deps } from '../deps.js';
import { LAST_USER_COOKIE, LOCKED_COOKIE, nextParam, safeNext } from '../auth/next.js';
import type { UserRow } from '../db/models.js';
import { enabledProviders } from '../oidc/service.js';
import { PASSKEY_SCRIPT_PATH, WEBAUTHN_SCRIPT_PATH } from './passkey.js';
import { PASSKEY_PATH, SECOND_FACTOR_PASSKEY_PATH } from '../auth/pending.js';

export type Lang = 'en' | 'de';
const T = {
  en: {
    title: 'Sign in',
    user: 'Username',
    pass: 'Password',
    submit: 'Sign in',
    invalid: 'Invalid username or password.',
    expired: 'The sign-in took too long: enter your username and password again.',
    locked: 'Too many failed attempts: this account is locked for a while.',
    lockedFor: (m: number) => `Try again in ${m} minute${m === 1 ? '' : 's'}.`,
    lockedUpTo: (m: number) => `A lock lasts up to ${m} minute${m === 1 ? '' : 's'}.`,
    or: 'or',
    signInWith: (name: string) => `Sign in with ${name}`,
  },
  de: {
    title: 'Anmelden',
    user: 'Benutzername',
    pass: 'Passwort',
    submit: 'Anmelden',
    invalid: 'Benutzername oder Passwort falsch.',
    expired: 'Die Anmeldung hat zu lange gedauert: geben Sie Benutzername und Passwort erneut ein.',
    locked: 'Zu viele Fehlversuche: dieses Konto ist vorübergehend gesperrt.',
    lockedFor: (m: number) => `Erneut versuchen in ${m} Minute${m === 1 ? '' : 'n'}.`,
    lockedUpTo: (m: number) => `Eine Sperre dauert höchstens ${m} Minute${m === 1 ? '' : 'n'}.`,
    or: 'oder',
    signInWith: (name: string) => `Mit ${name} anmelden`,
  },
};

export function pickLang(header: string | undefined): Lang {
  if (!header) return 'en';
  const langs = header
    .split(',')
    .map((p) => {
      const [tag, q] = p.trim().split(';q=');
      return { tag: tag.toLowerCase(), q: q ? Number(q) : 1 };
    })
    .sort((a, b) => b.q - a.q);
  for (const l of langs) {
    if (l.tag.startsWith('de')) return 'de';
    if (l.tag.startsWith('en')) return 'en';
  }
  return 'en';
}

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const CSS = `body{font-family:system-ui,sans-serif;background:#f4f5f7;color:#1d2330;margin:0;display:flex;min-height:100vh;align-items:center;justify-content:center}
main{background:#fff;padding:2rem;border-radius:8px;box-shadow:0 2px 12px rgba(0,0,0,.08);min-width:300px;max-width:420px}
h1{font-size:1.4rem;margin:0 0 1rem}label{display:block;margin:.8rem 0 .3rem;font-weight:600}
input{width:100%;box-sizing:border-box;padding:.55rem;border:1px solid #b8bec9;border-radius:4px;font-size:1rem}
button{margin-top:1.2rem;width:100%;padding:.6rem;background:#2456d3;color:#fff;border:0;border-radius:4px;font-size:1rem;cursor:pointer}
.err{background:#fdecea;color:#8a1c12;padding:.6rem;border-radius:4px}
button.secondary{background:#fff;color:#2456d3;border:1px solid #2456d3}small{color:#5b6472}`;
/** The look of the "Sign in with <provider>" links, on a sign-in page that has them. */
const SSO_CSS = `a.sso{display:block;box-sizing:border-box;margin-top:.6rem;width:100%;padding:.6rem;text-align:center;color:#2456d3;border:1px solid #2456d3;border-radius:4px;text-decoration:none}
p.or{text-align:center;color:#5b6472;margin:1rem 0 0}`;

/** The Content-Security-Policy of the server-rendered pages: no script at all, inline styles only. */
export const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'";

/** The CSP of a sign-in page with the passkey button: PAGE_CSP plus its own scripts and their calls. */
export const PASSKEY_PAGE_CSP = `${PAGE_CSP}; script-src 'self'; connect-src 'self'`;

const PASSKEY_T = {
  en: { signIn: 'Sign in with a passkey', use: 'Use a passkey', failed: 'The passkey was not accepted. Try again, or use another way to sign in.' },
  de: {
    signIn: 'Mit Passkey anmelden',
    use: 'Passkey verwenden',
    failed: 'Der Passkey wurde nicht angenommen. Erneut versuchen oder anders anmelden.',
  },
} satisfies Record<Lang, unknown>;

/**
 * The passkey button and its scripts (web/passkey.ts), shown only when the admin origin is configured
 * (pure): `sign_in` without a password, `second_factor` after it. Its page allows PASSKEY_PAGE_CSP.
 */
export function passkeyButton(lang: Lang, mode: 'sign_in' | 'second_factor'): string {
  const t = PASSKEY_T[lang];
  const base = mode === 'sign_in' ? PASSKEY_PATH : SECOND_FACTOR_PASSKEY_PATH;
  return `<button type="button" id="passkey-button" class="secondary" data-base="${base}" data-failed="${escapeHtml(t.failed)}">${mode === 'sign_in' ? t.signIn : t.use}</button>
<p id="passkey-error" class="err" role="alert" hidden></p><script src="${WEBAUTHN_SCRIPT_PATH}"></script><script src="${PASSKEY_SCRIPT_PATH}"></script>`;
}

/** A server-rendered page (no script, but the passkey button's own: web/passkey.ts) with the sign-in page's look. */
export function page(lang: Lang, title: string, body: string): string {
  return `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><link rel="icon" href="/favicon.svg" type="image/svg+xml"><title>${escapeHtml(title)} · Gatehouse</title><style>${CSS}</style></head><body>${body}</body></html>`;
}

/** The signed-in user of the request's session, or null. */
export async function sessionUser(deps: Deps, ctx: Koa.Context): Promise<UserRow | null> {
  const userId = ctx.session?.userId;
  return typeof userId === 'number' ? ((await deps.db.models.User.findByPk(userId, { raw: true })) as UserRow | null) : null;
}

/**
 * Whether the signed-in user must change a generated password first: the SPA's `/` (web/spa.ts)
 * redirects such a user to `passwordChangePath(ctx.originalUrl)` instead of serving the app.
 */
export async function mustChangePassword(deps: Deps, ctx: Koa.Context): Promise<boolean> {
  return Boolean((await sessionUser(deps, ctx))?.must_change_password);
}

/** /password, carrying `next` (a same-origin path, else nothing) as the target to go on to afterwards. */
export function passwordChangePath(next: unknown): string {
  return `/password${nextParam(next, '?')}`;
}

/** How long the lock of GET /login?error=locked lasts: from the cookie POST /login set, else the policy. */
async function lockedDetail(deps: Deps, ctx: Koa.Context, t: (typeof T)['en']): Promise<string> {
  const until = Number(ctx.cookies.get(LOCKED_COOKIE, { signed: true }));
  const left = until - deps.clock();
  if (Number.isFinite(until) && left > 0) return t.lockedFor(Math.ceil(left / 60_000));
  return t.lockedUpTo(await deps.settings.get('security.lockout.duration'));
}

/** The username of the refused sign-in this browser made last (GET /login?error=…), or ''. */
function lastUsername(ctx: Koa.Context): string {
  const v = ctx.cookies.get(LAST_USER_COOKIE, { signed: true });
  if (!v) return '';
  try {
    return decodeURIComponent(v).slice(0, 200);
  } catch {
    return '';
  }
}

/**
 * The sign-in page (pure: golden-testable); `error` is the message to show, `next` the target (kept only when same-origin),
 * `username` the name of a refused attempt, put back (the focus then goes to the password); `providers` the enabled
 * OpenID Connect providers, each a "Sign in with <name>" link to its start (oidc/flow.ts) carrying `next`.
 */
export function renderLoginPage(o: {
  lang: Lang;
  error?: string;
  next?: unknown;
  username?: string;
  providers?: { id: number; name: string }[];
  passkey?: boolean;
}): string {
  const t = T[o.lang];
  const target = safeNext(o.next);
  const sso = o.providers?.length
    ? `<style>${SSO_CSS}</style><p class="or">${t.or}</p>${o.providers.map((p) => `<a class="sso" href="/auth/oidc/${p.id}/start${nextParam(target, '?')}">${escapeHtml(t.signInWith(p.name))}</a>`).join('')}`
    : '';
  return page(
    o.lang,
    t.title,
    `<main><h1>Gatehouse · ${t.title}</h1>${o.error ? `<p class="err" role="alert">${escapeHtml(o.error)}</p>` : ''}
<form method="post" action="/login"><input type="hidden" name="next" value="${escapeHtml(target === '/' ? '' : target)}">
<label for="username">${t.user}</label><input id="username" name="username" autocomplete="username" required${o.username ? ` value="${escapeHtml(o.username)}"` : ' autofocus'}>
<label for="password">${t.pass}</label><input id="password" name="password" type="password" autocomplete="current-password" required${o.username ? ' autofocus' : ''}>
<button type="submit">${t.submit}</button></form>${o.passkey ? passkeyButton(o.lang, 'sign_in') : ''}${sso}</main>`,
  );
}

export function webMiddleware(deps: Deps): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' || ctx.path !== '/login') return next();
    const user = await sessionUser(deps, ctx);
    const lang: Lang = user?.language ?? pickLang(ctx.get('Accept-Language'));
    const t = T[lang];
    const passkey = Boolean(deps.config.adminOrigin);
    ctx.set('Content-Security-Policy', passkey ? PASSKEY_PAGE_CSP : PAGE_CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.type = 'text/html; charset=utf-8';
    if (ctx.path === '/login') {
      // Signed in already: on to the target (through /password while a generated password is unchanged).
      if (user) return ctx.redirect(user.must_change_password ? passwordChangePath(ctx.query.next) : safeNext(ctx.query.next));
      const error =
        ctx.query.error === 'locked'
          ? `${t.locked} ${await lockedDetail(deps, ctx, t)}`
          : ctx.query.error === 'invalid'
            ? t.invalid
            : ctx.query.error === 'expired'
              ? t.expired
              : '';
      ctx.body = renderLoginPage({
        lang,
        error,
        next: ctx.query.next,
        username: error ? lastUsername(ctx) : undefined,
        providers: await enabledProviders(deps.db.models),
        passkey,
      });
      return;
    }
    return next();
  };
}
