// The message catalogue: every message the server writes for a person (error bodies and their field
// messages, activity rows, gateway and RDP reasons, the route-auth pages) has a stable code here,
// declared once with its parameters (the TypeScript type of its English wording's argument), and
// its English text comes from that wording. A message travels as data, {code, params}; the admin
// app words each code in its reader's language (sidecar/ui/src/i18n/messages/), and its dictionary
// test fails on a code that either language lacks. docs/reference/errors.md lists the codes
// (npm run docs).
//
// Codes are `<area>.<what>` (`peer.name_taken`), field messages `<area>.field.<what>` or
// `field.<what>`. A code, once shipped, keeps its meaning and parameters: stored activity rows are
// worded from them again whenever they are shown.
import type { Catalogue, MessageRef, Words } from './define.js';
import { field } from './field.js';
import { licence } from './licence.js';
import { access } from './access.js';
import { backup } from './backup.js';
import { gateways } from './gateways.js';
import { rdp } from './rdp.js';
import { routes } from './routes.js';
import { schemas } from './schemas.js';
import { peers } from './peers.js';
import { request } from './request.js';
import { wireguard } from './wireguard.js';
import { outside } from './outside.js';
import { schedule } from './schedule.js';
import { quotas } from './quotas.js';
import { oidc } from './oidc.js';
import { cluster } from './cluster.js';

export type { Catalogue, MessageRef, Translation, Words, Wording } from './define.js';

/** The areas of the catalogue (each a file of this folder); a code lives in exactly one. */
export const AREAS = {
  request,
  field,
  schemas,
  access,
  peers,
  routes,
  rdp,
  gateways,
  backup,
  wireguard,
  licence,
  outside,
  schedule,
  quotas,
  oidc,
  cluster,
} as const;

export const MESSAGES = {
  ...request,
  ...field,
  ...schemas,
  ...access,
  ...peers,
  ...routes,
  ...rdp,
  ...gateways,
  ...backup,
  ...wireguard,
  ...licence,
  ...outside,
  ...schedule,
  ...quotas,
  ...oidc,
  ...cluster,
} satisfies Catalogue;

export type Messages = typeof MESSAGES;
export type Code = keyof Messages;
/** The parameters of a code (undefined for a code without). */
export type ParamsOf<C extends Code> = Parameters<Messages[C]>[0];
type Args<C extends Code> = undefined extends ParamsOf<C> ? [params?: ParamsOf<C>] : [params: ParamsOf<C>];

/** A message: its code and parameters, and its English text. */
export interface Msg<C extends Code = Code> {
  code: C;
  params?: ParamsOf<C>;
  /** the English wording */
  text: string;
}

export function isCode(code: string): code is Code {
  return Object.hasOwn(MESSAGES, code);
}

/** The English text of a message (of a known code; an unknown one is its code). */
export const english: Words = (ref: MessageRef) =>
  isCode(ref.code) ? (MESSAGES[ref.code] as (p: unknown, w: Words) => string)(ref.params ?? {}, english) : ref.code;

/** The message of a code with its parameters. */
export function msg<C extends Code>(code: C, ...[params]: Args<C>): Msg<C> {
  const ref: MessageRef = params === undefined ? { code } : { code, params: params as Record<string, unknown> };
  return { ...(ref as { code: C; params?: ParamsOf<C> }), text: english(ref) };
}

/** A failed item of a batch: the English text as `error`, beside its code and parameters. */
export function itemError(m: Msg): { error: string; code: string; params?: Record<string, unknown> } {
  return { error: m.text, ...refOf(m) };
}

/** The message as data (what bodies and rows carry): code and, when it has any, parameters. */
export function refOf(m: MessageRef): MessageRef {
  return m.params === undefined ? { code: m.code } : { code: m.code, params: m.params };
}

/** A code readBack() may read a text as, with the kind of each parameter. */
export interface ReadBackCode {
  code: Code;
  params?: Record<string, 'number' | 'text'>;
}

/**
 * A text written from one of these codes (and stored as text) read back as its message: the first
 * code whose English wording, with its parameters as placeholders, matches the whole text; `params`
 * names each parameter's kind. A text none matches is `fallback` with the text as its `detail`.
 */
export function readBack(text: string, codes: ReadBackCode[], fallback: Code): MessageRef {
  for (const c of codes) {
    const names = Object.keys(c.params ?? {});
    const marks = Object.fromEntries(names.map((n, i) => [n, `\uE000${i}\uE000`]));
    const sample = english({ code: c.code, params: marks });
    const source = sample
      .split(/\uE000(\d+)\uE000/)
      .map((part, i) => (i % 2 ? (c.params![names[Number(part)]] === 'number' ? '(\\d{1,15})' : '(.+?)') : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('');
    const order = [...sample.matchAll(/\uE000(\d+)\uE000/g)].map((m) => names[Number(m[1])]);
    const m = new RegExp(`^${source}$`, 's').exec(text);
    if (!m) continue;
    if (!names.length) return { code: c.code };
    const params: Record<string, unknown> = {};
    order.forEach((n, i) => (params[n] = c.params![n] === 'number' ? Number(m[i + 1]) : m[i + 1]));
    return { code: c.code, params };
  }
  return { code: fallback, params: { detail: text } };
}
