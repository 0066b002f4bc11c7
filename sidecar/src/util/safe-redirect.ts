// The one check of every redirect target that comes from a request: the admin `next` (GET /login?next=…
// through the sign-in and password-change forms), the route-auth `rd` (GET and POST /route-auth/login),
// and any later one (OIDC `next`). Whatever it returns, a browser resolves to the origin the request was
// made to, never to another.
//
// A target is accepted only when all of these hold (otherwise the fallback, "/" by default):
// - a string of at most 4096 characters, printable ASCII only: no control character (tab, CR, LF, NUL,
//   DEL, C1), no space, no non-ASCII (browsers drop tabs and newlines, so `/\t/evil` would become
//   `//evil`; look-alike characters are percent-encoded by a real client), no backslash anywhere
//   (browsers read `\` as `/` in http(s) URLs);
// - either a path: exactly one leading `/` (`//host` and `/\host` are scheme-relative URLs of another
//   host), or, where the caller allows it (route-auth `rd`), an absolute http(s) URL whose host and port
//   are the request's own, with no user or password (`//good@evil`, `http://good@evil`);
//   `javascript:`, `data:` and every other scheme (in any case) are refused;
// - the path, percent-decoded (up to three times: `%252F` is `%2F` a second time) and with its dot
//   segments resolved (`/.//evil`, `/a/..//evil`), does not start with `//` and holds no backslash or
//   control character: a target that is safe as given but turns into another host once a server or
//   a script decodes or normalises it (`/%2F/evil`, `/%5Cevil`) is refused as well;
// - a caller's own pages can be refused (route auth: a target under /route-auth/ in any case would
//   loop back to the login page).
// The accepted target is returned as given (a path) or as the URL parser serialises it (absolute).

const BASE = 'http://gatehouse.invalid';
const MAX = 4096;

export interface RedirectRules {
  /** the request's Host header: absolute http(s) URLs to exactly this host and port are accepted */
  sameHost?: string;
  /** path prefixes (lower case) whose targets are refused, compared case-insensitively after normalising */
  refusePrefixes?: readonly string[];
  /** what a refused target becomes (default "/") */
  fallback?: string;
  /** the longest target accepted (default and at most 4096 characters) */
  maxLength?: number;
}

/** Printable ASCII without space and backslash. */
function plain(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f || c === 0x5c) return false;
  }
  return true;
}

/** The path of a target percent-decoded until it no longer changes (at most three rounds), or null when it cannot be decoded. */
function decodedPath(path: string): string | null {
  let p = path;
  for (let i = 0; i < 3; i++) {
    let d: string;
    try {
      d = decodeURIComponent(p);
    } catch {
      return null;
    }
    if (d === p) return p;
    p = d;
  }
  return p.includes('%') ? null : p;
}

/** Whether a path (the part before ? and #) stays on the origin once decoded and normalised. */
function pathStaysHome(rawPath: string, refuse: readonly string[]): boolean {
  const d = decodedPath(rawPath);
  if (d === null) return false;
  for (let i = 0; i < d.length; i++) {
    const c = d.charCodeAt(i);
    if (c < 0x20 || c === 0x7f || c === 0x5c || (c >= 0x80 && c <= 0x9f)) return false;
  }
  if (!d.startsWith('/') || d.startsWith('//')) return false;
  let normalised: string;
  try {
    const u = new URL(d, BASE);
    if (u.origin !== BASE) return false;
    normalised = u.pathname;
  } catch {
    return false;
  }
  if (normalised.startsWith('//')) return false;
  const lower = normalised.toLowerCase();
  return !refuse.some((p) => lower === p.replace(/\/$/, '') || lower.startsWith(p));
}

/**
 * The redirect target to use for `target` (a query or form value), or `rules.fallback` ("/") when it
 * could take the browser anywhere but this origin. See the rules at the top of this file.
 */
export function safeRedirect(target: unknown, rules: RedirectRules = {}): string {
  const fallback = rules.fallback ?? '/';
  const refuse = rules.refusePrefixes ?? [];
  if (typeof target !== 'string' || !target || target.length > Math.min(rules.maxLength ?? MAX, MAX) || !plain(target)) return fallback;
  const cut = (s: string) => s.split(/[?#]/, 1)[0];
  if (target.startsWith('/')) {
    if (target.startsWith('//')) return fallback;
    let u: URL;
    try {
      u = new URL(target, BASE);
    } catch {
      return fallback;
    }
    if (u.origin !== BASE || u.username || u.password) return fallback;
    return pathStaysHome(cut(target), refuse) ? target : fallback;
  }
  if (!rules.sameHost || !/^https?:\/\/[^/]/i.test(target)) return fallback;
  let u: URL;
  try {
    u = new URL(target);
  } catch {
    return fallback;
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.username || u.password) return fallback;
  const want = rules.sameHost.toLowerCase();
  const defaultPort = u.protocol === 'https:' ? ':443' : ':80';
  if (u.host !== want && `${u.host}${defaultPort}` !== want) return fallback;
  const rest = target.slice(target.indexOf('//') + 2);
  const slash = rest.search(/[/?#]/);
  const rawPath = slash < 0 || rest[slash] !== '/' ? '/' : cut(rest.slice(slash));
  return pathStaysHome(rawPath, refuse) ? u.href : fallback;
}
