// Where a sign-in step goes next: the `next` target carried from GET /login?next=… through the
// login form (and the forced password change) to the redirect after it, limited to this origin.
import { safeRedirect } from '../util/safe-redirect.js';

/**
 * Only same-origin paths are accepted as a post-login target (util/safe-redirect.ts: one leading `/`,
 * no backslash, whitespace, control or non-ASCII character, nothing that turns into another host once
 * decoded or normalised), at most 2048 characters. Anything else is `/`.
 */
export function safeNext(next: unknown): string {
  return safeRedirect(next, { maxLength: 2048 });
}

/** `&next=…` for a redirect back to a sign-in step, or nothing when the target is `/`. */
export function nextParam(next: unknown, sep = '&'): string {
  const n = safeNext(next);
  return n === '/' ? '' : `${sep}next=${encodeURIComponent(n)}`;
}

/** Signed cookie with the username of a refused sign-in (URI-encoded): GET /login?error=… puts it back into the form. */
export const LAST_USER_COOKIE = 'gh_login_user';
/** How long GET /login remembers the username of a refused sign-in. */
export const LAST_USER_MAX_AGE_MS = 10 * 60_000;

/** Signed cookie that tells GET /login until when (epoch ms) a locked account stays locked. */
export const LOCKED_COOKIE = 'gh_login_locked';
