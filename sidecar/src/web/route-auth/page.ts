// The route-auth login pages: plain HTML forms (work without JavaScript), labelled fields, errors
// announced with role=alert, no external resources. The stylesheet is served from
// /route-auth/assets/login.css; per-route colours and images come in one <style> element allowed by
// a CSP nonce (colours are validated #rrggbb values, image URLs are our own paths).
import { escapeHtml } from '../index.js';
import { T, type ErrorKey, type Lang, type NoticeKey } from './i18n.js';
import type { BrandingColumns } from '../../route-auth/models.js';

export const LOGIN_CSS = `*,*::before,*::after{box-sizing:border-box}
:root{--primary:#2456d3;--bg:#eef1f6}
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg) center/cover no-repeat;color:#1d2330;padding:1rem}
main{background:#fff;padding:2rem;border-radius:10px;box-shadow:0 4px 24px rgba(0,0,0,.12);width:100%;max-width:400px}
.logo{display:block;max-width:180px;max-height:80px;margin:0 auto 1rem}
h1{font-size:1.35rem;margin:0 0 .4rem;text-align:center}
.desc{margin:0 0 1rem;text-align:center;color:#4a5263}
.domain{margin:0 0 1.2rem;text-align:center;color:#6b7385;font-size:.9rem}
label{display:block;margin:.9rem 0 .3rem;font-weight:600}
input{width:100%;padding:.6rem;border:1px solid #8a93a5;border-radius:5px;font-size:1rem}
input:focus{outline:3px solid var(--primary);outline-offset:1px;border-color:var(--primary)}
input.code{letter-spacing:.3em;font-size:1.3rem;text-align:center}
.hint{color:#4a5263;font-size:.92rem;margin:.4rem 0 0}
button{margin-top:1.2rem;width:100%;padding:.65rem;background:var(--primary);color:#fff;border:0;border-radius:5px;font-size:1rem;cursor:pointer}
button:focus-visible{outline:3px solid #1d2330;outline-offset:2px}
a.button{display:block;margin-top:1.2rem;padding:.65rem;background:var(--primary);color:#fff;border-radius:5px;font-size:1rem;text-align:center;text-decoration:none}
a.button:focus-visible{outline:3px solid #1d2330;outline-offset:2px}
dl{margin:0 0 .8rem}dt{font-weight:600;margin-top:.4rem}dd{margin:0;word-break:break-all}
button.link{background:none;color:var(--primary);text-decoration:underline;margin-top:.6rem;padding:.3rem}
.msg{padding:.65rem .8rem;border-radius:5px;margin:0 0 .8rem}
.err{background:#fdecea;color:#8a1c12}
.ok{background:#e7f5ec;color:#145c2c}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
`;

export type Step = 'password' | 'request_code' | 'code_email' | 'code_totp' | 'totp' | 'oidc' | 'logout' | 'message';

export interface Branding extends BrandingColumns {
  /** cache-busting version (updated_at) */
  version: number;
}

export interface PageOptions {
  lang: Lang;
  domain: string;
  branding: Branding | null;
  step: Step;
  csrf: string;
  rd: string;
  nonce: string;
  error?: ErrorKey;
  notice?: NoticeKey | 'signed_out';
  /** on a message page: a link to the login page (a share link that did not open, share-links/http.ts) */
  loginLink?: boolean;
  /** the route has users (routes.user_ids): the name field takes an email or a username, and the TOTP form asks for it */
  accounts?: boolean;
  /** the email or username typed before a failed sign-in: put back into its field (and the focus on the next one) */
  account?: string;
  /** the admin screen's live preview (in an iframe): no autofocus, which would scroll the admin page to the frame */
  preview?: boolean;
  /** method oidc: the provider's name ("Sign in with <name>"; step oidc) */
  provider?: string;
  /** method oidc refused: what the provider said of the visitor (their address and groups), or its own error */
  seen?: { email: string | null; groups: string[] };
  providerError?: string;
  /** on a message page: a link to start the sign-in again */
  retryLink?: boolean;
  /** where the branding images are served (default /route-auth/branding, on the route's domain; the admin preview uses its own API paths) */
  imageBase?: string;
}

const COLOR = /^#[0-9a-f]{6}$/i;

function brandingStyle(b: Branding | null, imageBase: string): string {
  if (!b) return '';
  const rules: string[] = [];
  const root: string[] = [];
  if (b.primary_color && COLOR.test(b.primary_color)) root.push(`--primary:${b.primary_color}`);
  if (b.bg_color && COLOR.test(b.bg_color)) root.push(`--bg:${b.bg_color}`);
  if (root.length) rules.push(`:root{${root.join(';')}}`);
  if (b.bg_image) rules.push(`body{background-image:url("${imageBase}/bg-image?v=${b.version}")}`);
  return rules.join('');
}

export function renderPage(o: PageOptions): string {
  const t = T[o.lang];
  const b = o.branding;
  const imageBase = o.imageBase ?? '/route-auth/branding';
  const title = b?.title || o.domain;
  const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
  const common = hidden('_csrf', o.csrf) + hidden('rd', o.rd);
  const form = (step: string, inner: string, button: string, extra = '') =>
    `<form method="post" action="/route-auth/login" novalidate${extra}>${common}${hidden('step', step)}${inner}<button type="submit">${escapeHtml(button)}</button></form>`;
  const errId = o.error ? ' aria-describedby="form-error"' : '';
  // The first empty field takes the focus (never in the admin preview: it would scroll the admin page).
  const account = o.account ? ` value="${escapeHtml(o.account)}"` : '';
  const focusName = o.preview || o.account ? '' : ' autofocus';
  const focusNext = o.preview ? '' : ' autofocus';
  const invalid = o.error ? ' aria-invalid="true"' : '';
  const codeInput = (hintId: string) =>
    `<label for="code">${t.code}</label><input id="code" name="code" class="code" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required${focusNext} aria-describedby="${hintId}${o.error ? ' form-error' : ''}"${invalid}>`;
  let body = '';
  const nameInput = (autocomplete: string) =>
    o.accounts
      ? `<label for="email">${t.account}</label><input id="email" name="email" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required${focusName}${account}${errId}${invalid}>`
      : `<label for="email">${t.email}</label><input id="email" name="email" type="email" autocomplete="${autocomplete}" required${focusName}${account}${errId}${invalid}>`;
  switch (o.step) {
    case 'password':
      body = form(
        'password',
        nameInput('username') +
          `<label for="password">${t.password}</label><input id="password" name="password" type="password" autocomplete="current-password" required${o.account && !o.preview ? ' autofocus' : ''}${errId}${invalid}>`,
        t.signIn,
      );
      break;
    case 'request_code':
      body = form('send_code', nameInput('email'), t.sendCode);
      break;
    case 'code_email':
      body =
        form('code', `<p class="hint" id="code-hint">${t.emailCodeHint}</p>${codeInput('code-hint')}`, t.verify) +
        form('resend', '', t.resend, ' class="inline"').replace('<button type="submit">', '<button type="submit" class="link">') +
        form('restart', '', t.startOver, ' class="inline"').replace('<button type="submit">', '<button type="submit" class="link">');
      break;
    case 'code_totp':
      body =
        form('code', `<p class="hint" id="code-hint">${t.totpHint}</p>${codeInput('code-hint')}`, t.verify) +
        form('restart', '', t.startOver, ' class="inline"').replace('<button type="submit">', '<button type="submit" class="link">');
      break;
    case 'totp':
      body = form(
        'totp',
        (o.accounts
          ? `<label for="account">${t.account}</label><input id="account" name="account" type="text" autocomplete="username" autocapitalize="none" spellcheck="false"${account}>`
          : '') + `<p class="hint" id="code-hint">${t.totpHint}</p>${codeInput('code-hint')}`,
        t.signIn,
      );
      break;
    case 'oidc':
      // a link (GET): the start sets its own binding cookie and goes to the provider
      body = o.preview
        ? `<p><a class="button" href="#">${escapeHtml(`${t.signInWith} ${o.provider ?? '…'}`)}</a></p>`
        : `<p><a class="button" href="/route-auth/oidc/start?rd=${encodeURIComponent(o.rd)}"${focusNext}>${escapeHtml(`${t.signInWith} ${o.provider ?? '…'}`)}</a></p>`;
      break;
    case 'logout':
      body = `<p>${t.signOutQuestion}</p><form method="post" action="/route-auth/logout">${common}<button type="submit">${t.signOut}</button></form>`;
      break;
    case 'message':
      body =
        (o.seen
          ? `<dl><dt>${t.seenEmail}</dt><dd>${escapeHtml(o.seen.email ?? t.none)}</dd><dt>${t.seenGroups}</dt><dd>${escapeHtml(o.seen.groups.join(', ') || t.none)}</dd></dl>`
          : '') +
        (o.providerError ? `<p class="hint">${t.providerSaid}: ${escapeHtml(o.providerError)}</p>` : '') +
        (o.retryLink ? `<p><a href="/route-auth/login?rd=${encodeURIComponent(o.rd)}">${t.tryAgain}</a></p>` : '') +
        (o.loginLink ? `<p><a href="/route-auth/login">${t.signInInstead}</a></p>` : '');
      break;
  }
  const error = o.error ? `<p class="msg err" role="alert" id="form-error">${escapeHtml(t.errors[o.error])}</p>` : '';
  const noticeText = o.notice === 'signed_out' ? t.signedOut : o.notice ? t.notices[o.notice] : '';
  const notice = noticeText ? `<p class="msg ok" role="status">${escapeHtml(noticeText)}</p>` : '';
  const logo = b?.logo ? `<img class="logo" src="${imageBase}/logo?v=${b.version}" alt="">` : '';
  const style = brandingStyle(b, imageBase);
  const heading = o.step === 'logout' ? t.signOut : b?.title ? escapeHtml(b.title) : `${t.signInTo} ${escapeHtml(o.domain)}`;
  return `<!doctype html><html lang="${o.lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="referrer" content="same-origin"><meta name="robots" content="noindex,nofollow">
<title>${escapeHtml(o.step === 'logout' ? t.signOut : t.signIn)} · ${escapeHtml(title)}</title><link rel="stylesheet" href="/route-auth/assets/login.css">${style ? `<style nonce="${o.nonce}">${style}</style>` : ''}</head>
<body><main>${logo}<h1>${heading}</h1>${b?.description ? `<p class="desc">${escapeHtml(b.description)}</p>` : ''}${b?.title ? `<p class="domain">${escapeHtml(o.domain)}</p>` : ''}${error}${notice}${body}</main></body></html>`;
}
