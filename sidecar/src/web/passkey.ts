// The two same-origin scripts of the passkey button of the server-rendered sign-in pages
// ("Sign in with a passkey" / "Use a passkey": passkeyButton in web/index.ts; the pages stay
// script-free otherwise, and work without them):
// - GET /login/webauthn.js: @simplewebauthn/browser's own UMD bundle (window.SimpleWebAuthnBrowser);
// - GET /login/passkey.js: asks POST <base>/options, hands them to startAuthentication() and posts
//   the browser's answer to <base> (base: /login/passkey without a password, /login/second-factor/passkey
//   as the second step), then goes on to `next`;
// - GET /login/passkey-enrol.js: the enrolment page's passkey (GET /login/enrol): shows its section when
//   the browser can, asks POST /login/enrol/passkey/options, hands them to startRegistration(), posts
//   the answer with the name to /login/enrol/passkey, and shows the recovery codes of the answer once
//   (text only, never markup) with the link on to `next`.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type Koa from 'koa';

export const WEBAUTHN_SCRIPT_PATH = '/login/webauthn.js';
export const PASSKEY_SCRIPT_PATH = '/login/passkey.js';
export const PASSKEY_ENROL_SCRIPT_PATH = '/login/passkey-enrol.js';
/** What both page scripts start with: the checked `next` of the form, the button's base path, a JSON POST. */
const SCRIPT_COMMON = `  var nextInput = document.querySelector('input[name=next]');
  var next = nextInput && /^\\/(?![\\/\\\\])/.test(nextInput.value) ? nextInput.value : '';
  var base = btn.getAttribute('data-base');
  function post(url, body) {
    return fetch(url, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body) })
      .then(function (r) { return r.json(); });
  }
`;

/** The page script (no inline script: the CSP allows 'self' only). */
const PASSKEY_SCRIPT = `(function () {
  var W = window.SimpleWebAuthnBrowser;
  var btn = document.getElementById('passkey-button');
  var err = document.getElementById('passkey-error');
  if (!btn) return;
  if (!W || !W.browserSupportsWebAuthn()) { btn.hidden = true; return; }
${SCRIPT_COMMON}  btn.addEventListener('click', function () {
    err.hidden = true;
    btn.disabled = true;
    post(base + '/options', {})
      .then(function (o) {
        if (!o.ok) throw o;
        return W.startAuthentication({ optionsJSON: o.options });
      })
      .then(function (credential) {
        var body = { credential: credential };
        if (next) body.next = next;
        return post(base, body);
      })
      .then(function (r) {
        if (!r.ok) throw r;
        var to = next || '/';
        location.assign(r.must_change_password ? '/password?next=' + encodeURIComponent(to) : to);
      })
      .catch(function (e) {
        if (e && e.code === 'auth.account_locked') return location.assign('/login?error=locked');
        if (e && e.code === 'second_factor.sign_in_pending') return location.assign('/login?error=expired');
        err.textContent = btn.getAttribute('data-failed');
        err.hidden = false;
        btn.disabled = false;
      });
  });
})();
`;

/** The enrolment page's script (GET /login/enrol with the admin origin configured). */
const PASSKEY_ENROL_SCRIPT = `(function () {
  var W = window.SimpleWebAuthnBrowser;
  var section = document.getElementById('passkey-enrol');
  var btn = document.getElementById('passkey-enrol-button');
  var err = document.getElementById('passkey-error');
  if (!section || !btn || !W || !W.browserSupportsWebAuthn()) return;
  section.hidden = false;
${SCRIPT_COMMON}  btn.addEventListener('click', function () {
    err.hidden = true;
    btn.disabled = true;
    var name = (document.getElementById('passkey-name').value || '').trim() || 'Passkey';
    post(base + '/options', {})
      .then(function (o) {
        if (!o.ok) throw o;
        return W.startRegistration({ optionsJSON: o.options });
      })
      .then(function (credential) {
        var body = { name: name, credential: credential };
        if (next) body.next = next;
        return post(base, body);
      })
      .then(function (r) {
        if (!r.ok) throw r;
        var to = next || '/';
        var list = document.getElementById('recovery-codes');
        (r.recovery_codes || []).forEach(function (c) {
          var li = document.createElement('li');
          var code = document.createElement('code');
          code.textContent = c;
          li.appendChild(code);
          list.appendChild(li);
        });
        document.getElementById('passkey-continue').setAttribute('href', r.must_change_password ? '/password?next=' + encodeURIComponent(to) : to);
        ['totp-enrol', 'passkey-enrol', 'enrol-cancel'].forEach(function (id) {
          var el = document.getElementById(id);
          if (el) el.hidden = true;
        });
        document.getElementById('passkey-codes').hidden = false;
      })
      .catch(function (e) {
        if (e && e.code === 'second_factor.sign_in_pending') return location.assign('/login?error=expired');
        err.textContent = btn.getAttribute('data-failed');
        err.hidden = false;
        btn.disabled = false;
      });
  });
})();
`;

let bundle: string | undefined;
/** @simplewebauthn/browser's UMD bundle, read once (the package exports only its modules, so the path is found from its main file). */
function webauthnBundle(): string {
  if (bundle === undefined) {
    const main = createRequire(import.meta.url).resolve('@simplewebauthn/browser');
    bundle = fs.readFileSync(path.join(path.dirname(main), '..', 'dist', 'bundle', 'index.umd.min.js'), 'utf8');
  }
  return bundle;
}

export function passkeyScriptsMiddleware(): Koa.Middleware {
  return async (ctx, next) => {
    const scripts: Record<string, () => string> = {
      [WEBAUTHN_SCRIPT_PATH]: webauthnBundle,
      [PASSKEY_SCRIPT_PATH]: () => PASSKEY_SCRIPT,
      [PASSKEY_ENROL_SCRIPT_PATH]: () => PASSKEY_ENROL_SCRIPT,
    };
    const script = Object.hasOwn(scripts, ctx.path) ? scripts[ctx.path] : undefined;
    if (ctx.method !== 'GET' || !script) return next();
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.body = script();
  };
}
