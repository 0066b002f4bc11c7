// Messages of access windows (routes' and peers' access_schedule, src/access-windows): field
// messages and the activity rows of the boundaries.
import type { Catalogue } from './define.js';

export const schedule = {
  'schedule.field.timezone': () => 'must be an IANA time zone such as Europe/Berlin or UTC',
  'schedule.field.time': () => 'must be a time HH:MM (00:00 to 23:59)',
  'schedule.field.time_to': () => 'must be a time HH:MM (00:01 to 24:00)',
  'schedule.field.same_times': () => 'from and to must differ (00:00 to 24:00 is the whole day)',
  'schedule.field.days': () => 'must be weekdays 1 (Monday) to 7 (Sunday), each once',
  'schedule.field.windows': () => 'between 1 and 50 windows',
  'schedule.route_closed': (p: { domain: string; opens_at: string | null }) =>
    `Route ${p.domain} closed by its access window${p.opens_at ? ` until ${p.opens_at}` : ''}`,
  'schedule.route_opened': (p: { domain: string }) => `Route ${p.domain} opened by its access window`,
  'schedule.peer_closed': (p: { name: string; opens_at: string | null }) =>
    `Peer ${p.name} closed by its access window${p.opens_at ? ` until ${p.opens_at}` : ''}: its tunnel carries no traffic`,
  'schedule.peer_opened': (p: { name: string }) => `Peer ${p.name} opened by its access window`,
} satisfies Catalogue;
