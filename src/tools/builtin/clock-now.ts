import { z } from 'zod';
import { defineTool, ToolError } from '../tool.ts';

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** The wall-clock reading of `instant` in `timeZone`, plus its UTC offset. */
function localReading(
  instant: Date,
  timeZone: string,
): { local: string; offset: string; weekday: string } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'long',
      timeZoneName: 'longOffset',
    })
      .formatToParts(instant)
      .map((part) => [part.type, part.value]),
  ) as Record<string, string>;
  const offsetText = (parts.timeZoneName ?? 'GMT').replace('GMT', '') || '+00:00';
  const millis = String(instant.getUTCMilliseconds()).padStart(3, '0');
  return {
    local: `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}.${millis}${offsetText}`,
    offset: offsetText,
    weekday: parts.weekday ?? '',
  };
}

export const clockNowTool = defineTool({
  name: 'clock_now',
  family: 'clock',
  effect: 'read_only',
  description:
    'The current time: UTC as RFC 3339, epoch milliseconds, and the local time, UTC offset and weekday in an IANA time zone (default UTC).',
  input: z.strictObject({
    timezone: z.string().min(1).max(64).optional().describe('IANA time zone, e.g. "Europe/Berlin"'),
  }),
  run: async ({ timezone }, context) => {
    const zone = timezone ?? 'UTC';
    if (!isTimeZone(zone)) throw new ToolError('INVALID_TIMEZONE', `unknown time zone "${zone}"`);
    const now = context.ports.now();
    const reading = localReading(now, zone);
    return {
      utc: now.toISOString(),
      epoch_ms: now.getTime(),
      timezone: zone,
      local: reading.local,
      utc_offset: reading.offset,
      weekday: reading.weekday,
    };
  },
});
