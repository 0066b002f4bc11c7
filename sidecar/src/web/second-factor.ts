// The second step of an admin sign-in, server-rendered like the sign-in page (no script):
// - GET /login/second-factor: the code of the account's authenticator app, or a recovery code
//   (posts to POST /login/second-factor in auth/endpoints.ts), and "Use a passkey" when the account
//   has one (web/passkey.ts);
// - GET /login/enrol: the TOTP enrolment the policy asks for before the first session of an account
//   without a second factor: the QR code and the secret, and the first code (posts to POST /login/enrol,
//   whose answer is the recovery-codes page below), or, when the admin origin is configured, a passkey
//   instead (web/passkey.ts's enrolment script: POST /login/enrol/passkey/options, the browser's
//   dialog, POST /login/enrol/passkey, then the recovery codes shown once on the same page).
// Both need the password step of this session within the last 10 minutes (auth/pending.ts); without
// it they send the browser back to /login?error=expired.
import type Koa from 'koa';
import type { Deps } from '../deps.js';
import { nextParam, safeNext } from '../auth/next.js';
import { ENROL_PASSKEY_PATH, ENROL_PATH, SECOND_FACTOR_PATH, pendingSignIn } from '../auth/pending.js';
import type { TotpSetup } from '../auth/second-factor.js';
import { PAGE_CSP, PASSKEY_PAGE_CSP, escapeHtml, page, passkeyButton, pickLang, type Lang } from './index.js';
import { PASSKEY_ENROL_SCRIPT_PATH, WEBAUTHN_SCRIPT_PATH } from './passkey.js';

const T = {
  en: {
    title: 'Second factor',
    intro: 'Enter the 6-digit code your authenticator app shows for Gatehouse, or one of your recovery codes.',
    introPasskey: 'Use your passkey, or enter one of your recovery codes.',
    recoveryCode: 'Recovery code',
    code: 'Code',
    submit: 'Sign in',
    cancel: 'Cancel',
    invalid: 'That code is wrong or was used already.',
    enrolTitle: 'Set up a second factor',
    enrolIntro:
      'Every account on this server needs a second factor. Scan the QR code with an authenticator app (or type the key into it), then enter the 6-digit code it shows.',
    key: 'Key',
    enrolSubmit: 'Activate and sign in',
    enrolInvalid: 'That code does not match: check the time on your phone and try the current code.',
    codesTitle: 'Your recovery codes',
    codesIntro:
      'Each code signs you in once if you lose your authenticator. Keep them somewhere safe (a password manager, printed): they are shown only now. New ones can be made under Profile.',
    continue: 'Continue',
    enrolPasskey: 'Or use a passkey',
    enrolPasskeyIntro: 'A passkey on this device or a security key signs you in instead of a code.',
    passkeyName: 'Name of the passkey',
    passkeyDefault: 'Passkey',
    enrolPasskeySubmit: 'Create a passkey and sign in',
    enrolPasskeyFailed: 'No passkey was created (cancelled, or not allowed here). Try again, or use the authenticator app.',
  },
  de: {
    title: 'Zweiter Faktor',
    intro: 'Geben Sie den 6-stelligen Code ein, den Ihre Authenticator-App für Gatehouse zeigt, oder einen Ihrer Wiederherstellungscodes.',
    introPasskey: 'Verwenden Sie Ihren Passkey oder geben Sie einen Ihrer Wiederherstellungscodes ein.',
    recoveryCode: 'Wiederherstellungscode',
    code: 'Code',
    submit: 'Anmelden',
    cancel: 'Abbrechen',
    invalid: 'Dieser Code ist falsch oder wurde schon verwendet.',
    enrolTitle: 'Zweiten Faktor einrichten',
    enrolIntro:
      'Jedes Konto auf diesem Server braucht einen zweiten Faktor. Scannen Sie den QR-Code mit einer Authenticator-App (oder tippen Sie den Schlüssel ein) und geben Sie dann den 6-stelligen Code ein, den sie zeigt.',
    key: 'Schlüssel',
    enrolSubmit: 'Aktivieren und anmelden',
    enrolInvalid: 'Der Code passt nicht: prüfen Sie die Uhrzeit Ihres Telefons und versuchen Sie den aktuellen Code.',
    codesTitle: 'Ihre Wiederherstellungscodes',
    codesIntro:
      'Jeder Code meldet Sie einmal an, falls Sie Ihren Authenticator verlieren. Bewahren Sie sie sicher auf (Passwort-Manager, ausgedruckt): sie werden nur jetzt gezeigt. Neue gibt es unter Profil.',
    continue: 'Weiter',
    enrolPasskey: 'Oder einen Passkey verwenden',
    enrolPasskeyIntro: 'Ein Passkey auf diesem Gerät oder ein Sicherheitsschlüssel meldet Sie statt eines Codes an.',
    passkeyName: 'Name des Passkeys',
    passkeyDefault: 'Passkey',
    enrolPasskeySubmit: 'Passkey erstellen und anmelden',
    enrolPasskeyFailed: 'Es wurde kein Passkey erstellt (abgebrochen oder hier nicht erlaubt). Erneut versuchen oder die Authenticator-App verwenden.',
  },
} satisfies Record<Lang, unknown>;

const hiddenNext = (next: unknown) => {
  const n = safeNext(next);
  return `<input type="hidden" name="next" value="${escapeHtml(n === '/' ? '' : n)}">`;
};
/** Back to the sign-in page: the pending step ends (POST /logout needs no CSRF token without a signed-in session). */
const cancelForm = (label: string) => `<form method="post" action="/logout"><button type="submit" class="secondary">${label}</button></form>`;

/** GET /login/second-factor (pure: golden-testable). */
export function renderSecondFactorPage(o: { lang: Lang; error?: boolean; next?: unknown; passkey?: boolean; totp?: boolean }): string {
  const t = T[o.lang];
  const intro = o.totp === false ? t.introPasskey : t.intro;
  return page(
    o.lang,
    t.title,
    `<main><h1>Gatehouse · ${t.title}</h1><p>${intro}</p>${o.error ? `<p class="err" role="alert">${t.invalid}</p>` : ''}
<form method="post" action="${SECOND_FACTOR_PATH}">${hiddenNext(o.next)}
<label for="code">${o.totp === false ? t.recoveryCode : t.code}</label><input id="code" name="code" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" maxlength="64" required${o.passkey ? '' : ' autofocus'}${o.error ? ' aria-invalid="true"' : ''}>
<button type="submit">${t.submit}</button></form>${o.passkey ? passkeyButton(o.lang, 'second_factor') : ''}${cancelForm(t.cancel)}</main>`,
  );
}

/**
 * The passkey choice of the enrolment page (its script: web/passkey.ts), and the recovery codes'
 * section it fills once the passkey is stored (hidden until then; the same words as the TOTP's page).
 */
function enrolPasskey(t: (typeof T)[Lang]): string {
  return `<section id="passkey-enrol" hidden><h2>${t.enrolPasskey}</h2><p>${t.enrolPasskeyIntro}</p>
<label for="passkey-name">${t.passkeyName}</label><input id="passkey-name" maxlength="64" value="${escapeHtml(t.passkeyDefault)}">
<button type="button" id="passkey-enrol-button" class="secondary" data-base="${ENROL_PASSKEY_PATH}" data-failed="${escapeHtml(t.enrolPasskeyFailed)}">${t.enrolPasskeySubmit}</button>
<p id="passkey-error" class="err" role="alert" hidden></p></section>
<section id="passkey-codes" hidden><h1>Gatehouse · ${t.codesTitle}</h1><p>${t.codesIntro}</p><ul id="recovery-codes"></ul><p><a id="passkey-continue" href="/">${t.continue}</a></p></section>
<script src="${WEBAUTHN_SCRIPT_PATH}"></script><script src="${PASSKEY_ENROL_SCRIPT_PATH}"></script>`;
}

/** GET /login/enrol (pure: golden-testable); `passkey`: the admin origin is configured, a passkey may be the factor. */
export function renderEnrolPage(o: { lang: Lang; setup: TotpSetup; error?: boolean; next?: unknown; passkey?: boolean }): string {
  const t = T[o.lang];
  return page(
    o.lang,
    t.enrolTitle,
    `<main><div id="totp-enrol"><h1>Gatehouse · ${t.enrolTitle}</h1><p>${t.enrolIntro}</p>${o.error ? `<p class="err" role="alert">${t.enrolInvalid}</p>` : ''}
<img src="${escapeHtml(o.setup.qr_code)}" alt="QR code" width="240" height="240">
<p>${t.key}: <code id="totp-secret">${escapeHtml(o.setup.secret)}</code></p>
<form method="post" action="${ENROL_PATH}">${hiddenNext(o.next)}
<label for="code">${t.code}</label><input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required autofocus${o.error ? ' aria-invalid="true"' : ''}>
<button type="submit">${t.enrolSubmit}</button></form></div>${o.passkey ? enrolPasskey(t) : ''}<div id="enrol-cancel">${cancelForm(t.cancel)}</div></main>`,
  );
}

/** The answer of POST /login/enrol for browsers: the recovery codes, this once, and the way on (pure). */
export function renderRecoveryCodesPage(o: { lang: Lang; codes: string[]; next: string }): string {
  const t = T[o.lang];
  return page(
    o.lang,
    t.codesTitle,
    `<main><h1>Gatehouse · ${t.codesTitle}</h1><p>${t.codesIntro}</p>
<ul id="recovery-codes">${o.codes.map((c) => `<li><code>${escapeHtml(c)}</code></li>`).join('')}</ul>
<p><a href="${escapeHtml(safeNext(o.next))}">${t.continue}</a></p></main>`,
  );
}

export function secondFactorPagesMiddleware(deps: Deps): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' || (ctx.path !== SECOND_FACTOR_PATH && ctx.path !== ENROL_PATH)) return next();
    const steps = ctx.path === SECOND_FACTOR_PATH ? (['totp', 'passkey'] as const) : (['enrol'] as const);
    const pending = pendingSignIn(ctx, deps.clock(), ...steps);
    if (typeof ctx.session?.userId === 'number') return ctx.redirect(safeNext(ctx.query.next));
    if (!pending) {
      return ctx.redirect(`/login?error=expired${nextParam(ctx.query.next)}`);
    }
    const user = await deps.users.getRow(pending.userId);
    const lang: Lang = user.language ?? pickLang(ctx.get('Accept-Language'));
    const status = pending.step === 'enrol' ? null : await deps.secondFactor.status(user.id);
    // the second step: a passkey the account has; the enrolment: a passkey to create
    const passkey = Boolean(deps.config.adminOrigin) && (status === null || status.passkeys > 0);
    ctx.set('Content-Security-Policy', passkey ? PASSKEY_PAGE_CSP : PAGE_CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'text/html; charset=utf-8';
    const error = ctx.query.error === 'invalid';
    ctx.body = status
      ? renderSecondFactorPage({ lang, error, next: ctx.query.next, passkey, totp: status.totp_active })
      : renderEnrolPage({ lang, error, next: ctx.query.next, passkey, setup: await deps.secondFactor.beginTotp(user, true) });
  };
}
