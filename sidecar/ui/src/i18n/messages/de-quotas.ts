// German wordings of the data-quota messages (@gatehouse/common/messages/quotas.ts).
import type { Translation } from '@gatehouse/common/messages/define.js';
import { quotaBytes, type quotas } from '@gatehouse/common/messages/quotas.js';

const bytes = (n: number) => quotaBytes(n).replace('.', ',');

export const quotas_de = {
  'quota.field.throttle_kbit_required': () => 'erforderlich, wenn die Aktion „drosseln“ ist (die Geschwindigkeit in kbit/s)',
  'quota.field.resets_on_weekly': () => 'muss für einen wöchentlichen Zeitraum ein ISO-Wochentag 1 (Montag) bis 7 (Sonntag) sein',
  'quota.field.resets_on_daily': () => 'ein täglicher Zeitraum beginnt um Mitternacht: resets_on weglassen',
  'quota.no_quota': () => 'Dieser Peer hat kein Datenkontingent (weder ein eigenes noch eines seiner Gruppe)',
  'quota.warning': (p) => `Peer ${p.name} hat 80 % seines Datenkontingents verbraucht (${bytes(p.used)} von ${bytes(p.limit)})`,
  'quota.exceeded': (p) =>
    `Peer ${p.name} hat sein Datenkontingent verbraucht (${bytes(p.used)} von ${bytes(p.limit)})${p.action === 'disable' ? ': deaktiviert bis zum nächsten Zeitraum' : p.action === 'throttle' ? ': gedrosselt bis zum nächsten Zeitraum' : ''}`,
  'quota.reset_period': (p) => `Datenkontingent von Peer ${p.name}: ein neuer Zeitraum hat begonnen, die Zählung beginnt bei null`,
  'quota.reset_admin': (p) => `Datenkontingent von Peer ${p.name}: die Zählung des Zeitraums wurde auf null gesetzt`,
  'quota.granted': (p) => `Datenkontingent von Peer ${p.name}: ${bytes(p.bytes)} zusätzlich für diesen Zeitraum`,
} satisfies Translation<typeof quotas>;
