// Whether a text is a cron rule the scheduler can run ("m h dom mon dow", optionally with seconds
// first): cron-parser, the parser node-schedule uses, with a next time to run at. Pure JavaScript, so
// request schemas (and browsers) can check a rule the same way as util/scheduler.ts runs it.
import cronParser from 'cron-parser';

export function validCron(rule: string): boolean {
  try {
    cronParser.parseExpression(rule).next();
    return true;
  } catch {
    return false;
  }
}

/** The last time at or before `now` (epoch ms) at which a cron rule fell due; null when the rule is not one. */
export function lastDue(rule: string, now: number): number | null {
  try {
    // prev() is strictly before currentDate: start 1 ms later so a due time of exactly `now` counts
    return cronParser
      .parseExpression(rule, { currentDate: new Date(now + 1) })
      .prev()
      .getTime();
  } catch {
    return null;
  }
}
