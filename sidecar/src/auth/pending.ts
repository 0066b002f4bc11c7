// A sign-in between its steps: the password was right, and the account still needs its second factor
// (`totp`: a code or a passkey; `passkey`: a passkey or a recovery code) or, under the policy, its
// enrolment (`enrol`). The session then holds only this (no
// userId: nothing is signed in) and for PENDING_SIGN_IN_MS at most.
import type Koa from 'koa';

export const SECOND_FACTOR_PATH = '/login/second-factor';
export const ENROL_PATH = '/login/enrol';
/** The passkey sign-ins: options, then the browser's answer (the second step under SECOND_FACTOR_PATH, the sign-in without a password under this). */
export const PASSKEY_PATH = '/login/passkey';
export const SECOND_FACTOR_PASSKEY_PATH = `${SECOND_FACTOR_PATH}/passkey`;
/** A passkey as the enrolment the policy asks for (options, then the browser's answer), instead of a TOTP. */
export const ENROL_PASSKEY_PATH = `${ENROL_PATH}/passkey`;
/** How long a password step waits for its second step. */
export const PENDING_SIGN_IN_MS = 10 * 60_000;

export interface PendingSignIn {
  userId: number;
  step: 'totp' | 'passkey' | 'enrol';
  /** epoch ms of the password step */
  at: number;
}

/** The password step this session made, when it is recent (PENDING_SIGN_IN_MS) and waits for one of `steps`; else null. */
export function pendingSignIn(ctx: Koa.Context, now: number, ...steps: PendingSignIn['step'][]): PendingSignIn | null {
  const p = ctx.session?.pendingSignIn as PendingSignIn | undefined;
  if (!p || !steps.includes(p.step) || typeof p.userId !== 'number' || now - p.at > PENDING_SIGN_IN_MS) return null;
  return p;
}
