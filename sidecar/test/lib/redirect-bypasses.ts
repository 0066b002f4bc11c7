// Known open-redirect bypass forms, shared by the unit test of util/safe-redirect.ts and the security
// suite (test/security/redirects.test.ts), which sends each through every redirect parameter of a
// running sidecar. HOST is the origin the targets must stay on; EVIL the one they try to reach.
export const HOST = 'app.example.test';
export const EVIL = 'evil.example';

/** Targets that must never come out as (or turn into) anything but a path or URL of HOST. */
export const BYPASSES: readonly string[] = [
  // scheme-relative and backslash forms
  `//${EVIL}`,
  `//${EVIL}/x`,
  `///${EVIL}`,
  `////${EVIL}`,
  `/\\${EVIL}`,
  `/\\/${EVIL}`,
  `\\\\${EVIL}`,
  `\\/${EVIL}`,
  `/x\\..\\\\${EVIL}`,
  `/a\\b`,
  // dot segments that normalise to //host
  `/.//${EVIL}/phish`,
  `/./\\${EVIL}`,
  `/a/..//${EVIL}`,
  `/a/../..//${EVIL}`,
  `/a/%2e%2e//${EVIL}`,
  `/%2e//${EVIL}`,
  // percent-encoded slashes and backslashes
  `/%2F/${EVIL}`,
  `/%2f%2f${EVIL}`,
  `/%5C${EVIL}`,
  `/%5c${EVIL}`,
  `%2F%2F${EVIL}`,
  `%5C%5C${EVIL}`,
  `/%252F/${EVIL}`,
  `/%09/${EVIL}`,
  `/%0a/${EVIL}`,
  // tab, CR, LF and other control characters, which browsers drop or choke on
  `/\t/${EVIL}`,
  `\t//${EVIL}`,
  `/\r/${EVIL}`,
  `/\n/${EVIL}`,
  `/\r\n/${EVIL}`,
  `/\x00/${EVIL}`,
  `/\x0b/${EVIL}`,
  `/\x0c/${EVIL}`,
  `/\x1f/${EVIL}`,
  `/\x7f/${EVIL}`,
  `/\u0085/${EVIL}`,
  `/\u00a0/${EVIL}`,
  ` //${EVIL}`,
  `//${EVIL} `,
  // other schemes, in any case
  'javascript:alert(1)',
  'JAVASCRIPT:alert(1)',
  'JaVaScRiPt:alert(1)',
  'java\tscript:alert(1)',
  ' javascript:alert(1)',
  'javascript://%0aalert(1)',
  'data:text/html,<script>alert(1)</script>',
  'DATA:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
  'vbscript:msgbox(1)',
  `ftp://${HOST}/`,
  `file:///etc/passwd`,
  // absolute URLs of another host, in any case and shape
  `http://${EVIL}/`,
  `https://${EVIL}`,
  `HTTPS://${EVIL}/`,
  `hTtP://${EVIL}/`,
  `http:${EVIL}`,
  `http:/${EVIL}`,
  `http:\\\\${EVIL}`,
  `https:/\\${EVIL}`,
  `https://${HOST}.${EVIL}/`,
  `https://${EVIL}#${HOST}`,
  `https://${EVIL}?${HOST}`,
  `https://${EVIL}/${HOST}`,
  `https://${HOST}:8443/`,
  // userinfo
  `//${HOST}@${EVIL}`,
  `https://${HOST}@${EVIL}/`,
  `https://user:pass@${HOST}/`,
  `https://${HOST}\\@${EVIL}/`,
  `https://${EVIL}\\@${HOST}/`,
  // unicode look-alikes of / . and @ (fullwidth solidus, division slash, ideographic full stop, fullwidth at)
  `/\uff0f${EVIL}`,
  `\uff0f\uff0f${EVIL}`,
  `/\u2215\u2215${EVIL}`,
  `https://${EVIL}\u3002${HOST}/`,
  `https://${HOST}\uff20${EVIL}/`,
  `https://evil\u3002example/`,
  // not a path at all
  EVIL,
  `${EVIL}/x`,
  '',
];

/** Same-origin paths that must come back unchanged. */
export const GOOD_PATHS: readonly string[] = [
  '/',
  '/peers',
  '/peers?q=x&sort=name',
  '/routes/3#auth',
  '/a/%2F%2Fb',
  '/a//b',
  '/docs?next=//x',
  '/x?u=https://evil.example/',
];

/** Whether a redirect target, as a browser on `origin` would resolve it, stays on that origin. */
export function staysOn(target: string, origin: string): boolean {
  try {
    const u = new URL(target, `${origin}/route-auth/login`);
    return u.origin === origin && !u.pathname.startsWith('//') && !target.startsWith('//') && !target.includes('\\');
  } catch {
    return false;
  }
}
