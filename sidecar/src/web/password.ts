// GET /password: the server-rendered password change (no script; posts to POST /password in
// auth/endpoints.ts). A user whose password was generated (the first admin, or a CLI reset) is sent
// here after signing in and by the UI until the password is changed; anyone signed in may use it.
import type Koa from 'koa';
import type { Deps } from '../deps.js';
import { newCsrfToken } from '../http/auth.js';
import { nextParam, safeNext } from '../auth/next.js';
import { PASSWORD_MIN } from '../users/schema.js';
import { INITIAL_PASSWORD_FILE } from '../users/service.js';
import { PAGE_CSP, escapeHtml, page, sessionUser, type Lang } from './index.js';

const T = {
  en: {
    title: 'Change password',
    forced: `Your password was generated when the account was set up (or reset). Choose your own to continue; the file ${INITIAL_PASSWORD_FILE} is deleted then.`,
    current: 'Current password',
    next: 'New password',
    confirm: 'New password again',
    submit: 'Change password',
    logout: 'Sign out',
    hint: `At least ${PASSWORD_MIN} characters.`,
    errors: {
      current: 'The current password is wrong.',
      policy: `The new password needs at least ${PASSWORD_MIN} characters.`,
      mismatch: 'The two new passwords differ.',
      same: 'The new password must differ from the current one.',
    } as Record<string, string>,
  },
  de: {
    title: 'Passwort ändern',
    forced: `Ihr Passwort wurde bei der Einrichtung (oder Zurücksetzung) des Kontos erzeugt. Wählen Sie ein eigenes, um fortzufahren; die Datei ${INITIAL_PASSWORD_FILE} wird dann gelöscht.`,
    current: 'Aktuelles Passwort',
    next: 'Neues Passwort',
    confirm: 'Neues Passwort wiederholen',
    submit: 'Passwort ändern',
    logout: 'Abmelden',
    hint: `Mindestens ${PASSWORD_MIN} Zeichen.`,
    errors: {
      current: 'Das aktuelle Passwort ist falsch.',
      policy: `Das neue Passwort braucht mindestens ${PASSWORD_MIN} Zeichen.`,
      mismatch: 'Die beiden neuen Passwörter stimmen nicht überein.',
      same: 'Das neue Passwort muss sich vom aktuellen unterscheiden.',
    } as Record<string, string>,
  },
} satisfies Record<Lang, unknown>;

/** The page itself (pure: golden-testable). */
export function renderPasswordPage(o: { lang: Lang; forced: boolean; error?: string; csrf: string; next: string }): string {
  const t = T[o.lang];
  const err = o.error ? t.errors[o.error] : undefined;
  const next = safeNext(o.next);
  return page(
    o.lang,
    t.title,
    `<main><h1>Gatehouse · ${t.title}</h1>${o.forced ? `<p>${escapeHtml(t.forced)}</p>` : ''}${err ? `<p class="err" role="alert">${escapeHtml(err)}</p>` : ''}
<form method="post" action="/password"><input type="hidden" name="_csrf" value="${escapeHtml(o.csrf)}"><input type="hidden" name="next" value="${escapeHtml(next === '/' ? '' : next)}">
<label for="current">${t.current}</label><input id="current" name="current" type="password" autocomplete="current-password" required autofocus>
<label for="new_password">${t.next}</label><input id="new_password" name="new_password" type="password" autocomplete="new-password" minlength="${PASSWORD_MIN}" required aria-describedby="hint"><small id="hint">${t.hint}</small>
<label for="confirm">${t.confirm}</label><input id="confirm" name="confirm" type="password" autocomplete="new-password" minlength="${PASSWORD_MIN}" required>
<button type="submit">${t.submit}</button></form>
<form method="post" action="/logout"><input type="hidden" name="_csrf" value="${escapeHtml(o.csrf)}"><button type="submit" class="secondary">${t.logout}</button></form></main>`,
  );
}

export function passwordPageMiddleware(deps: Deps): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' || ctx.path !== '/password') return next();
    const user = await sessionUser(deps, ctx);
    if (!user) return ctx.redirect(`/login${nextParam(ctx.originalUrl, '?')}`);
    if (typeof ctx.session!.csrf !== 'string') ctx.session!.csrf = newCsrfToken();
    ctx.set('Content-Security-Policy', PAGE_CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'text/html; charset=utf-8';
    const error = typeof ctx.query.error === 'string' ? ctx.query.error : undefined;
    ctx.body = renderPasswordPage({
      lang: user.language,
      forced: Boolean(user.must_change_password),
      error,
      csrf: ctx.session!.csrf,
      next: String(ctx.query.next ?? ''),
    });
  };
}
