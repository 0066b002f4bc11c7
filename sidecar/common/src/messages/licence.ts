// Messages of the licence: refused keys, features and limits it does not grant, its activity rows.
import type { Catalogue, MessageRef } from './define.js';

export const licence = {
  'licence.feature_required': (p: { feature: string }) => `This needs the licence feature ${p.feature}`,
  'licence.limit_reached': (p: { max: number; what: 'peers' | 'routes' }) => `The licence allows at most ${p.max} ${p.what}; remove one or extend the licence`,
  'licence.key_refused': (p: { reason: MessageRef }, w) => `Licence key refused: ${w(p.reason)}`,
  'licence.none_stored': () => 'No licence is stored: activate a key first',
  // why a key is refused (the `key` field, and inside licence.key_refused)
  'licence.key.malformed': (p: { prefix: string }) => `Not a Gatehouse licence key: expected ${p.prefix}.<key id>.<document>.<signature>`,
  'licence.key.unknown_signer': (p: { kid: string; trusted: string[] }) =>
    `The key was signed with a key this server does not trust (key id ${p.kid}; trusted: ${p.trusted.join(', ') || 'none'})`,
  'licence.key.bad_signature': () => 'The signature does not match the document: the key was altered or damaged',
  'licence.key.not_json': () => 'The signed document is not JSON',
  'licence.key.not_understood': (p: { issues: string }) => `The signed document is not a licence this version understands: ${p.issues}`,
  'licence.key.expired': (p: { id: string; expired_at: string }) => `The licence ${p.id} expired on ${p.expired_at}`,
  'licence.key.not_yet_valid': (p: { id: string; issued_at: string }) => `The licence ${p.id} is issued for ${p.issued_at}, later than this server's clock`,
  // activity
  'licence.changed': (p: { reason: 'activated' | 'refreshed' | 'expired' | 'removed' | 'grace_ended' | 'revoked'; plan: string }) =>
    `Licence ${p.reason}: plan ${p.plan}`,
} satisfies Catalogue;
