// German wordings of the access-window messages (@gatehouse/common/messages/schedule.ts).
import type { Translation } from '@gatehouse/common/messages/define.js';
import type { schedule } from '@gatehouse/common/messages/schedule.js';

export const schedule_de = {
  'schedule.field.timezone': () => 'muss eine IANA-Zeitzone sein, etwa Europe/Berlin oder UTC',
  'schedule.field.time': () => 'muss eine Uhrzeit HH:MM sein (00:00 bis 23:59)',
  'schedule.field.time_to': () => 'muss eine Uhrzeit HH:MM sein (00:01 bis 24:00)',
  'schedule.field.same_times': () => 'Von und Bis müssen sich unterscheiden (00:00 bis 24:00 ist der ganze Tag)',
  'schedule.field.days': () => 'müssen Wochentage 1 (Montag) bis 7 (Sonntag) sein, jeder einmal',
  'schedule.field.windows': () => 'zwischen 1 und 50 Zeitfenster',
  'schedule.route_closed': (p) => `Route ${p.domain} durch ihr Zeitfenster geschlossen${p.opens_at ? ` bis ${p.opens_at}` : ''}`,
  'schedule.route_opened': (p) => `Route ${p.domain} durch ihr Zeitfenster geöffnet`,
  'schedule.peer_closed': (p) => `Peer ${p.name} durch sein Zeitfenster geschlossen${p.opens_at ? ` bis ${p.opens_at}` : ''}: sein Tunnel überträgt nichts`,
  'schedule.peer_opened': (p) => `Peer ${p.name} durch sein Zeitfenster geöffnet`,
} satisfies Translation<typeof schedule>;
