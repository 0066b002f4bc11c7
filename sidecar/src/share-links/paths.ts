// Path prefixes of share links (pure; the verify endpoint imports it on its hot path).
//
// A share link's session is valid only under its path_prefix. The forward-auth request carries the
// URI as the visitor sent it (X-Forwarded-Uri); the backend may read it decoded or not, with dot
// segments resolved or not, with `;params` cut or not. A request is allowed only when every such
// reading of its path is under the prefix: the path as sent with dot segments resolved, and the path
// percent-decoded (repeatedly), in both cases with backslashes as slashes, empty segments merged and
// anything from a `;` on in a segment dropped (Tomcat reads `..;` as `..`). The comparison is
// segment-wise: prefix /docs covers /docs and /docs/x, never /docsx.

/** The form a stored prefix has: segments of URL path characters, no dot segments, no trailing slash. */
export const PATH_PREFIX_RE = /^(\/[A-Za-z0-9._~!$&'()*+,=:@-]+)+$/;

/** A prefix as the admin typed it, in its stored form ("/docs/" → "/docs"; "/" or empty → null), or undefined when it is not one. */
export function normalizePrefix(input: string | null | undefined): string | null | undefined {
  if (input === null || input === undefined) return null;
  let p = input.trim();
  if (p === '' || p === '/') return null;
  if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  if (!PATH_PREFIX_RE.test(p)) return undefined;
  if (p.split('/').some((seg) => seg === '.' || seg === '..')) return undefined;
  return p;
}

function segmentsOf(path: string): string[] {
  const out: string[] = [];
  for (const raw of path.replace(/\\/g, '/').split('/')) {
    const seg = raw.split(';')[0].replace(/[\s\p{Cc}]+$/u, '');
    if (seg === '' || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  return out;
}

/** A path percent-decoded until it no longer changes (at most 4 rounds; a bad escape decoded byte-wise). */
export function decodeAll(p: string): string {
  for (let i = 0; i < 4; i++) {
    let d: string;
    try {
      d = decodeURIComponent(p);
    } catch {
      d = p.replace(/%([0-9a-f]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
    }
    if (d === p) break;
    p = d;
  }
  return p;
}

const under = (segs: string[], prefix: string[]) => segs.length >= prefix.length && prefix.every((s, i) => segs[i] === s);

/** Whether a request URI (path and query as sent) is under a stored prefix in every reading (see above). */
export function underPathPrefix(uri: string, prefix: string): boolean {
  let path = uri || '/';
  const q = path.search(/[?#]/);
  if (q !== -1) path = path.slice(0, q);
  const want = prefix.split('/').filter(Boolean);
  return under(segmentsOf(path), want) && under(segmentsOf(decodeAll(path)), want);
}

/**
 * A request URI as the access log keeps it: a share link's token (`t` of /route-auth/share, in any
 * spelling of the path) replaced by `…`, so the stored log and the trace never hold a working link.
 */
export function redactShareToken(uri: string): string {
  const q = uri.indexOf('?');
  if (q === -1) return uri;
  const path = uri.slice(0, q);
  if (!/share/i.test(path)) return uri;
  return `${path}?${uri.slice(q + 1).replace(/(^|&)(t|%74)=[^&#]*/gi, '$1t=…')}`;
}
