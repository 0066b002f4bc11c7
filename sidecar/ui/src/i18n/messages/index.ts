// Server messages in the reader's language. The server sends every message it writes for a person
// as data beside its English text (error bodies: code, params, field_codes; activity rows: code,
// params): @gatehouse/common/messages holds each code's English wording (the server's own), and the
// files here the German one, typed by the English wording's parameters, so a code without its
// German wording does not compile; sidecar/ui/test/i18n.test.ts walks the server's catalogue too.
// A code this app does not know (a newer server) shows the server's English text.
import { MESSAGES, type MessageRef, type Messages, type Translation, type Words } from '@gatehouse/common/messages/index.js';
import { access_de, backup_de } from './de-access';
import { peers_de, licence_de, wireguard_de } from './de-peers';
import { request_de, field_de } from './de-request';
import { routes_de, rdp_de, gateways_de } from './de-routes';
import { schemas_de } from './de-schemas';
import { outside_de } from './de-outside';
import { schedule_de } from './de-schedule';
import { quotas_de } from './de-quotas';
import { oidc_de } from './de-oidc';
import { cluster_de } from './de-cluster';
import type { Lang } from '../define';

export const DE = {
  ...request_de,
  ...field_de,
  ...schemas_de,
  ...access_de,
  ...peers_de,
  ...routes_de,
  ...rdp_de,
  ...gateways_de,
  ...backup_de,
  ...wireguard_de,
  ...licence_de,
  ...outside_de,
  ...schedule_de,
  ...quotas_de,
  ...oidc_de,
  ...cluster_de,
} satisfies Translation<Messages>;

type AnyWording = (p: unknown, w: Words) => string;
const CATALOGUES: Record<Lang, Record<string, AnyWording>> = { en: MESSAGES as Record<string, AnyWording>, de: DE as Record<string, AnyWording> };

/** Words a message in a language; `fallback` (the server's English text) for a code this app does not know. */
export function wordIn(lang: Lang, ref: MessageRef, fallback?: string): string {
  const words: Words = (r) => {
    const f = Object.hasOwn(CATALOGUES[lang], r.code) ? CATALOGUES[lang][r.code] : undefined;
    if (!f) return r === ref && fallback !== undefined ? fallback : r.code;
    try {
      return f(r.params ?? {}, words);
    } catch {
      // parameters of another shape than this app knows (a newer server): its English text
      return r === ref && fallback !== undefined ? fallback : r.code;
    }
  };
  return words(ref);
}
