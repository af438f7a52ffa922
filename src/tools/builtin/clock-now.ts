import { z } from 'zod';
import type { AnyToolSpec } from '../tool.ts';
import { defineTool, ToolError } from '../tool.ts';

/**
 * Formatters by time zone. Building an Intl.DateTimeFormat costs far more than using one
 * (it was the runtime's top JavaScript cost per turn in the throughput bench), so each
 * tool instance keeps the ones it made. The IANA zone list is finite, so this is bounded.
 */
class ZoneFormatters {
  private readonly byZone = new Map<string, Intl.DateTimeFormat | null>();

  get(timeZone: string): Intl.DateTimeFormat | null {
    let formatter = this.byZone.get(timeZone);
    if (formatter === undefined) {
      try {
        formatter = new Intl.DateTimeFormat('en-US', {
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
        });
      } catch {
        formatter = null;
      }
      // Unknown names are remembered too, but only a bounded number of them.
      if (formatter !== null || this.byZone.size < 1024) this.byZone.set(timeZone, formatter);
    }
    return formatter;
  }
}

/** The wall-clock reading of `instant` through `formatter`, plus its UTC offset. */
function localReading(
  instant: Date,
  formatter: Intl.DateTimeFormat,
): { local: string; offset: string; weekday: string } {
  const parts = Object.fromEntries(
    formatter.formatToParts(instant).map((part) => [part.type, part.value]),
  ) as Record<string, string>;
  const offsetText = (parts.timeZoneName ?? 'GMT').replace('GMT', '') || '+00:00';
  const millis = String(instant.getUTCMilliseconds()).padStart(3, '0');
  return {
    local: `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}.${millis}${offsetText}`,
    offset: offsetText,
    weekday: parts.weekday ?? '',
  };
}

export function createClockNowTool(): AnyToolSpec {
  const formatters = new ZoneFormatters();
  return defineTool({
    name: 'clock_now',
    family: 'clock',
    effect: 'read_only',
    description:
      'The current time: UTC as RFC 3339, epoch milliseconds, and the local time, UTC offset and weekday in an IANA time zone (default UTC).',
    input: z.strictObject({
      timezone: z
        .string()
        .min(1)
        .max(64)
        .optional()
        .describe('IANA time zone, e.g. "Europe/Berlin"'),
    }),
    run: async ({ timezone }, context) => {
      const zone = timezone ?? 'UTC';
      const formatter = formatters.get(zone);
      if (!formatter) throw new ToolError('INVALID_TIMEZONE', `unknown time zone "${zone}"`);
      const now = context.ports.now();
      const reading = localReading(now, formatter);
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
}
