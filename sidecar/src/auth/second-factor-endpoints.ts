// The second factor of admin-UI accounts over the API (auth/second-factor.ts):
// - the owner, from a signed-in browser session (never with an API token: a stolen token must not
//   be able to move the second factor): status, TOTP set-up and activation, removal, new recovery
//   codes, each write with the current password (set-up, removal, new codes) or a code of the new
//   secret (activation); passkeys: list, registration options (password) and the browser's answer
//   (its challenge from the session), rename, removal (password);
// - an admin: DELETE /users/:id/second-factor, the way back in for a user who lost theirs (as the
//   CLI's reset-second-factor is for the operator).
// The users list shows who has one (totp_active).
import { msg } from '@gatehouse/common/messages/index.js';
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { actingUserId, type Principal } from '../http/auth.js';
import { forbidden, unprocessable } from '../util/errors.js';
import type { PasskeyChallenge } from './second-factor.js';
import {
  currentPasswordBody,
  passkeyOptionsResponse,
  passkeyRegisterBody,
  passkeyRegisteredResponse,
  passkeyRenameBody,
  passkeyResponse,
  passkeysResponse,
  recoveryCodesResponse,
  secondFactorResetResponse,
  secondFactorStatusResponse,
  totpActivateBody,
  totpSetupResponse,
} from './schema.js';

export function secondFactorEndpoints(deps: AppContext): Endpoint[] {
  /** The signed-in owner (sessionOnly: a session, never a token). */
  const owner = async (ctx: { state: { principal?: Principal } }) => {
    const id = actingUserId(ctx.state.principal);
    if (id === undefined) throw forbidden(msg('auth.session_only'));
    return deps.users.getRow(id);
  };
  /** The signed-in owner, once the current password is checked (422 naming `current`). */
  const ownerWithPassword = async (ctx: { state: { principal?: Principal } }, current: string) => {
    const user = await owner(ctx);
    const f = await deps.users.currentPasswordProblem(user.id, current);
    if (Object.keys(f).length) throw unprocessable(msg('auth.current_password_wrong'), f);
    return user;
  };
  const currentPasswordCheck = async (raw: Record<string, unknown>, ctx: { state: { principal?: Principal } }) => {
    const id = actingUserId(ctx.state.principal);
    return id === undefined ? {} : deps.users.currentPasswordProblem(id, raw.current);
  };
  return [
    defineEndpoint({
      method: 'GET',
      path: '/settings/second-factor',
      response: secondFactorStatusResponse,
      selfService: true,
      sessionOnly: true,
      summary:
        "The signed-in user's second factor: whether a TOTP is active or a set-up pending, how many recovery codes are left, and whether the policy requires one",
      tags: ['settings'],
      handler: async (_i, ctx) => ({ second_factor: await deps.secondFactor.status((await owner(ctx)).id) }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/settings/second-factor/totp',
      response: totpSetupResponse,
      selfService: true,
      sessionOnly: true,
      secrets: "a new TOTP secret of the caller's own account (with its otpauth URL and QR code), pending until activated",
      summary:
        'Start a TOTP set-up ({current}: the password): a new secret to add to an authenticator app, pending until POST /settings/second-factor/totp/verify confirms a code from it. An active TOTP keeps working until then (this is how a new phone is set up)',
      tags: ['settings'],
      body: currentPasswordBody,
      storedChecks: currentPasswordCheck,
      handler: async ({ body }, ctx) => {
        const user = await ownerWithPassword(ctx, body.current);
        return { setup: await deps.secondFactor.beginTotp(user) };
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/settings/second-factor/totp/verify',
      response: recoveryCodesResponse,
      selfService: true,
      sessionOnly: true,
      secrets: "ten new recovery codes of the caller's own account, shown this once",
      summary:
        'Activate the pending TOTP with a code from it ({token}); the answer holds ten new recovery codes, shown this once (earlier ones end). 409 without a pending set-up, 422 when the code does not match',
      tags: ['settings'],
      body: totpActivateBody,
      handler: async ({ body }, ctx) => {
        const user = await owner(ctx);
        const recovery_codes = await deps.secondFactor.activateTotp(user, body.token, user.id);
        return { recovery_codes, second_factor: await deps.secondFactor.status(user.id) };
      },
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/settings/second-factor/totp',
      response: secondFactorStatusResponse,
      selfService: true,
      sessionOnly: true,
      summary:
        'Remove the TOTP and the recovery codes ({current}: the password). 409 while the policy requires a second factor (set up a new TOTP to replace it instead)',
      tags: ['settings'],
      body: currentPasswordBody,
      storedChecks: currentPasswordCheck,
      handler: async ({ body }, ctx) => {
        const user = await ownerWithPassword(ctx, body.current);
        await deps.secondFactor.removeTotp(user, user.id);
        return { second_factor: await deps.secondFactor.status(user.id) };
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/settings/second-factor/recovery-codes',
      response: recoveryCodesResponse,
      selfService: true,
      sessionOnly: true,
      secrets: "ten new recovery codes of the caller's own account, shown this once",
      summary: 'New recovery codes ({current}: the password), shown this once; the earlier ones end. 409 without an active TOTP',
      tags: ['settings'],
      body: currentPasswordBody,
      storedChecks: currentPasswordCheck,
      handler: async ({ body }, ctx) => {
        const user = await ownerWithPassword(ctx, body.current);
        const recovery_codes = await deps.secondFactor.renewRecoveryCodes(user, user.id);
        return { recovery_codes, second_factor: await deps.secondFactor.status(user.id) };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/settings/second-factor/passkeys',
      response: passkeysResponse,
      selfService: true,
      sessionOnly: true,
      summary: "The signed-in user's passkeys (names, transports, when added and last used; never key material)",
      tags: ['settings'],
      handler: async (_i, ctx) => ({ passkeys: await deps.secondFactor.passkeys((await owner(ctx)).id) }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/settings/second-factor/passkeys/options',
      response: passkeyOptionsResponse,
      selfService: true,
      sessionOnly: true,
      summary:
        'Start adding a passkey ({current}: the password): WebAuthn options for navigator.credentials.create() (a discoverable credential bound to the admin origin, so it can also be the whole sign-in). The challenge is kept in the session for 5 minutes; POST /settings/second-factor/passkeys answers it. 409 when the admin origin is not configured (GATEHOUSE_ADMIN_ORIGIN or GATEHOUSE_ADMIN_DOMAIN)',
      tags: ['settings'],
      body: currentPasswordBody,
      storedChecks: currentPasswordCheck,
      handler: async ({ body }, ctx) => {
        const user = await ownerWithPassword(ctx, body.current);
        const { options, challenge } = await deps.secondFactor.registrationOptions(user);
        ctx.session!.passkeyChallenge = challenge;
        return { options: { ...options } };
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/settings/second-factor/passkeys',
      response: passkeyRegisteredResponse,
      status: 201,
      selfService: true,
      sessionOnly: true,
      secrets: "ten new recovery codes of the caller's own account, shown this once, when the passkey is its first second factor",
      summary:
        "Add a passkey: {name, credential} where credential is the browser's answer to the options of POST /settings/second-factor/passkeys/options. The account's first second factor also brings ten recovery codes, shown this once. 409 without a pending challenge or for a passkey registered already, 422 when it does not verify",
      tags: ['settings'],
      body: passkeyRegisterBody,
      handler: async ({ body }, ctx) => {
        const user = await owner(ctx);
        const challenge = ctx.session!.passkeyChallenge as PasskeyChallenge | undefined;
        delete ctx.session!.passkeyChallenge;
        const added = await deps.secondFactor.addPasskey(user, body.name, body.credential, challenge);
        return { ...added, second_factor: await deps.secondFactor.status(user.id) };
      },
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/settings/second-factor/passkeys/:id',
      response: passkeyResponse,
      selfService: true,
      sessionOnly: true,
      summary: "Rename one of the signed-in user's passkeys ({name}); another account's passkey is not found",
      tags: ['settings'],
      body: passkeyRenameBody,
      handler: async ({ params, body }, ctx) => {
        const user = await owner(ctx);
        return { passkey: await deps.secondFactor.renamePasskey(user, params.id, body.name) };
      },
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/settings/second-factor/passkeys/:id',
      response: secondFactorStatusResponse,
      selfService: true,
      sessionOnly: true,
      summary:
        "Remove one of the signed-in user's passkeys ({current}: the password); another account's passkey is not found. 409 while the policy requires a second factor and it is the last one. The last second factor takes the recovery codes with it",
      tags: ['settings'],
      body: currentPasswordBody,
      storedChecks: currentPasswordCheck,
      handler: async ({ params, body }, ctx) => {
        const user = await ownerWithPassword(ctx, body.current);
        await deps.secondFactor.removePasskey(user, params.id);
        return { second_factor: await deps.secondFactor.status(user.id) };
      },
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/users/:id/second-factor',
      response: secondFactorResetResponse,
      adminRole: true,
      summary:
        'Remove every second factor of a user (TOTP, passkeys and recovery codes), whatever the policy: the way back in for a user who lost their authenticator. Under the policy the user enrols again at the next sign-in. `reset`: whether there was one',
      tags: ['users'],
      handler: async ({ params }, ctx) => {
        const user = await deps.users.getRow(params.id);
        return { reset: await deps.secondFactor.reset(user, actingUserId(ctx.state.principal) ?? null) };
      },
    }),
  ];
}
