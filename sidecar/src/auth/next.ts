// Where a sign-in step goes next: the `next` target carried from GET /login?next=… through the
// login form (and the forced password change) to the redirect after it, limited to this origin.
const NEXT_BASE = 'http://gatehouse.invalid';

/**
 * Only same-origin relative paths are accepted as a post-login target: a single leading `/` (not
 * `//` or `/\`, which browsers read as another host), no backslash, whitespace or control character
 * anywhere (browsers drop tabs and newlines, so `/\t/evil` would become `//evil`), and the path
 * must resolve to this origin. Anything else is `/`.
 */
export function safeNext(next: unknown): string {
  if (typeof next !== 'string' || next.length > 2048 || !next.startsWith('/') || next.startsWith('//')) return '/';
  for (const c of next) if (c <= ' ' || c === '\x7f' || c === '\\' || /\s/.test(c)) return '/';
  try {
    if (new URL(next, NEXT_BASE).origin !== NEXT_BASE) return '/';
  } catch {
    return '/';
  }
  return next;
}

/** `&next=…` for a redirect back to a sign-in step, or nothing when the target is `/`. */
export function nextParam(next: unknown, sep = '&'): string {
  const n = safeNext(next);
  return n === '/' ? '' : `${sep}next=${encodeURIComponent(n)}`;
}

/** Signed cookie that tells GET /login until when (epoch ms) a locked account stays locked. */
export const LOCKED_COOKIE = 'gh_login_locked';
