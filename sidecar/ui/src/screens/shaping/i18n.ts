import { defineDict } from '../../i18n/define';

export default defineDict('shaping', {
  en: {
    speedLimit: 'Speed cap',
    down: 'Download cap (kbit/s)',
    up: 'Upload cap (kbit/s)',
    peerHint: 'Empty: the group’s default applies{group}. 1,000 kbit/s = 1 Mbit/s.',
    groupHintText: ' ({value})',
    groupHint: 'The default cap of the group’s peers; a peer’s own cap wins. Empty: not capped. 1,000 kbit/s = 1 Mbit/s.',
    none: 'No cap',
    value: '↓ {down} · ↑ {up}',
    unlimited: 'unlimited',
    kbit: '{n} kbit/s',
    mbit: '{n} Mbit/s',
    fromGroup: 'from group {name}',
    own: 'own',
  },
  de: {
    speedLimit: 'Geschwindigkeitslimit',
    down: 'Download-Limit (kbit/s)',
    up: 'Upload-Limit (kbit/s)',
    peerHint: 'Leer: Es gilt der Standard der Gruppe{group}. 1.000 kbit/s = 1 Mbit/s.',
    groupHintText: ' ({value})',
    groupHint: 'Das Standard-Limit der Peers der Gruppe; das eigene Limit eines Peers hat Vorrang. Leer: kein Limit. 1.000 kbit/s = 1 Mbit/s.',
    none: 'Kein Limit',
    value: '↓ {down} · ↑ {up}',
    unlimited: 'unbegrenzt',
    kbit: '{n} kbit/s',
    mbit: '{n} Mbit/s',
    fromGroup: 'von Gruppe {name}',
    own: 'eigenes',
  },
});
