// access_schedule, the field routes and peers share (zod; browser-safe: the admin app checks its
// form with it): {timezone, windows: [{days, from, to}]} or null (always open). The semantics are
// in schedule.ts. access_state: what the API adds to a route or peer view (derived, not stored).
import { z } from 'zod';
import { UNPROCESSABLE } from '../http/fields.js';
import { fieldIssue, fieldText } from '../http/messages.js';
import { msg } from '@gatehouse/common/messages/index.js';
import { isTimeZone, minutesOf } from './time.js';

const time = (code: 'schedule.field.time' | 'schedule.field.time_to', max: number) =>
  z
    .string({ error: fieldText(code) })
    .regex(/^([01][0-9]|2[0-4]):[0-5][0-9]$/, fieldText(code))
    // the document's pattern allows 24:59 and, for `from`, 24:00: the range is a rule it cannot state (422)
    .refine(
      (v) => {
        const m = minutesOf(v);
        return m >= (max === 1440 ? 1 : 0) && m <= max;
      },
      { message: fieldText(code), params: UNPROCESSABLE },
    )
    .meta({ pattern: '^([01][0-9]|2[0-4]):[0-5][0-9]$' });

export const accessWindow = z
  .strictObject({
    days: z
      .array(
        z
          .number({ error: fieldText('schedule.field.days') })
          .int(fieldText('schedule.field.days'))
          .min(1, fieldText('schedule.field.days'))
          .max(7, fieldText('schedule.field.days')),
        {
          error: fieldText('schedule.field.days'),
        },
      )
      .min(1, fieldText('schedule.field.days'))
      .max(7, fieldText('schedule.field.days'))
      .refine((d) => new Set(d).size === d.length, { message: fieldText('schedule.field.days'), params: UNPROCESSABLE })
      .meta({ description: 'ISO weekdays: 1 = Monday … 7 = Sunday' }),
    from: time('schedule.field.time', 1439).meta({ description: 'local time the window opens, HH:MM' }),
    to: time('schedule.field.time_to', 1440).meta({
      description: 'local time the window closes, HH:MM (24:00: end of the day); earlier than from: the window crosses midnight and closes on the next day',
    }),
  })
  .superRefine((w, ctx) => {
    if (typeof w.from === 'string' && w.from === w.to) ctx.addIssue(fieldIssue(msg('schedule.field.same_times'), { path: ['to'] }));
  });

export const accessSchedule = z
  .strictObject({
    timezone: z
      .string({ error: fieldText('schedule.field.timezone') })
      .refine(isTimeZone, { message: fieldText('schedule.field.timezone'), params: UNPROCESSABLE })
      .meta({ description: 'IANA time zone the windows are read in (Europe/Berlin, UTC)' }),
    windows: z
      .array(accessWindow, { error: fieldText('schedule.field.windows') })
      .min(1, fieldText('schedule.field.windows'))
      .max(50, fieldText('schedule.field.windows')),
  })
  .nullable()
  .meta({
    description:
      'when the route or peer is open: local weekly windows in a time zone; outside them an HTTP route answers 403 with a page naming the opening time, an L4 route has no listener (connections refused) and a peer leaves the WireGuard interface. null: always open',
  });
export type AccessScheduleInput = z.infer<typeof accessSchedule>;

/** The derived state a route or peer view carries. */
export const accessState = z
  .object({
    open: z.boolean().meta({ description: 'false: outside its access window now' }),
    next_change_at: z.string().nullable().meta({ format: 'date-time', description: 'when it opens (closed) or closes (open) next; null: never' }),
    closed_answers: z.number().int().meta({ description: 'routes: 403 answers given while closed since the sidecar started; peers: 0' }),
  })
  .meta({ description: 'the access window state now (always open without access_schedule)' });
export type AccessState = z.infer<typeof accessState>;

/** access_schedule as the API returns it (stored values, already checked). */
export const accessScheduleView = z
  .object({
    timezone: z.string(),
    windows: z.array(z.object({ days: z.array(z.number().int()), from: z.string(), to: z.string() })),
  })
  .nullable()
  .meta({ description: 'the access window; null: always open' });
/** A stored schedule (checked on the way in); the pure core in schedule.ts reads it. */
export type AccessSchedule = NonNullable<z.output<typeof accessScheduleView>>;
