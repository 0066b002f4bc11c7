// A sign-in between its steps: the password was right, and the account still needs its second factor
// (`totp`) or, under the policy, its enrolment (`enrol`). The session then holds only this (no
// userId: nothing is signed in) and for PENDING_SIGN_IN_MS at most.
import type Koa from 'koa';

export const SECOND_FACTOR_PATH = '/login/second-factor';
export const ENROL_PATH = '/login/enrol';
/** How long a password step waits for its second step. */
export const PENDING_SIGN_IN_MS = 10 * 60_000;

export interface PendingSignIn {
  userId: number;
  step: 'totp' | 'enrol';
  /** epoch ms of the password step */
  at: number;
}

/** The password step this session made, when it is recent (PENDING_SIGN_IN_MS) and waits for `step`; else null. */
export function pendingSignIn(ctx: Koa.Context, now: number, step: PendingSignIn['step']): PendingSignIn | null {
  const p = ctx.session?.pendingSignIn as PendingSignIn | undefined;
  if (!p || p.step !== step || typeof p.userId !== 'number' || now - p.at > PENDING_SIGN_IN_MS) return null;
  return p;
}
