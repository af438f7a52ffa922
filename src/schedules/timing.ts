// When a schedule fires. croner does cron lines in IANA time zones, including DST: a
// wall time skipped by spring-forward fires at the first instant after the gap, one
// repeated by fall-back fires once (test/schedules-scheduler.test.ts proves both).

import { Cron } from 'croner';
import type { ScheduleTiming } from '../types.ts';

export const MIN_EVERY_MS = 1000;

export function isIanaTimeZone(name: string): boolean {
  // Fixed offsets ("+08:00") are not IANA names; Intl on Node 20 rejects them too.
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

function cronFor(timing: { cron: string; timezone: string }): Cron {
  return new Cron(timing.cron, { timezone: timing.timezone, paused: true });
}

/** What is wrong with a cron line, or null. */
export function cronProblem(cron: string, timezone: string): string | null {
  try {
    const next = cronFor({ cron, timezone }).nextRun(new Date());
    return next === null ? 'never fires' : null;
  } catch (error) {
    return (error as Error).message.split('\n')[0] ?? 'not a valid cron line';
  }
}

/**
 * The first fire time strictly after `after` (epoch ms), or null when there is none.
 * `anchor` is the fire time the schedule was due at: intervals keep their phase from it.
 */
export function nextFireAfter(
  timing: ScheduleTiming,
  after: number,
  anchor?: number,
): number | null {
  switch (timing.kind) {
    case 'cron': {
      const next = cronFor(timing).nextRun(new Date(after));
      return next === null ? null : next.getTime();
    }
    case 'every': {
      if (anchor === undefined || anchor > after) return anchor ?? after + timing.every_ms;
      const steps = Math.floor((after - anchor) / timing.every_ms) + 1;
      return anchor + steps * timing.every_ms;
    }
    case 'at': {
      const at = Date.parse(timing.at);
      return at > after ? at : null;
    }
  }
}
