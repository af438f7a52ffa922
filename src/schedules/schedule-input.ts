// Turns a schedule document (REST body or schedule_put tool input) into what the store
// keeps: exactly one timing, validated, with its first next_fire_at computed. Shared by
// the HTTP route and the tool port so both apply the same rules.

import { KeelError } from '../errors.ts';
import type { ScheduleTiming } from '../types.ts';
import type { ScheduleWrite } from '../store/store.ts';
import type { ScheduleToolDocument } from '../tools/builtin/schedule-port.ts';
import { cronProblem, isIanaTimeZone, MIN_EVERY_MS, nextFireAfter } from './timing.ts';

/** What a tool passes, plus the agent and scope the tool port binds it to. */
export interface ScheduleDocument extends ScheduleToolDocument {
  agent: string;
  scope: string;
}

function invalid(field: string, message: string): KeelError {
  return new KeelError('VALIDATION_FAILED', `${field}: ${message}`);
}

function timingOf(doc: ScheduleDocument, context = 'body'): ScheduleTiming {
  const given = (['cron', 'every_ms', 'at'] as const).filter((key) => doc[key] !== undefined);
  if (given.length !== 1) {
    throw invalid(
      context,
      `exactly one of cron (with timezone), every_ms or at is required${given.length > 1 ? `, got ${given.join(', ')}` : ''}`,
    );
  }
  if (doc.timezone !== undefined && doc.cron === undefined) {
    throw invalid(`${context}.timezone`, 'only goes with cron');
  }
  if (doc.cron !== undefined) {
    if (doc.timezone === undefined) {
      throw invalid(
        `${context}.timezone`,
        'is required with cron (an IANA name such as "Europe/Berlin" or "UTC")',
      );
    }
    if (!isIanaTimeZone(doc.timezone)) {
      throw invalid(`${context}.timezone`, `"${doc.timezone}" is not an IANA time zone`);
    }
    const problem = cronProblem(doc.cron, doc.timezone);
    if (problem) throw invalid(`${context}.cron`, problem);
    return { kind: 'cron', cron: doc.cron, timezone: doc.timezone };
  }
  if (doc.every_ms !== undefined) {
    if (!Number.isInteger(doc.every_ms) || doc.every_ms < MIN_EVERY_MS) {
      throw invalid(`${context}.every_ms`, `must be an integer ≥ ${MIN_EVERY_MS}`);
    }
    return { kind: 'every', every_ms: doc.every_ms };
  }
  const at = Date.parse(doc.at as string);
  if (!Number.isFinite(at)) throw invalid(`${context}.at`, 'must be an RFC 3339 time');
  return { kind: 'at', at: new Date(at).toISOString() };
}

/** Validates the document and computes its first fire time from `now` (epoch ms). */
export function scheduleWriteOf(
  doc: ScheduleDocument,
  now: number,
  context = 'body',
): ScheduleWrite {
  const timing = timingOf(doc, context);
  if (timing.kind === 'at' && Date.parse(timing.at) <= now) {
    throw invalid(
      `${context}.at`,
      `${timing.at} is in the past; an at schedule must be in the future`,
    );
  }
  const enabled = doc.enabled ?? true;
  const next = nextFireAfter(timing, now);
  return {
    agent: doc.agent,
    scope: doc.scope,
    payload: doc.payload,
    timing,
    misfire: doc.misfire ?? 'run_once',
    enabled,
    delivery: doc.delivery ?? null,
    next_fire_at: enabled && next !== null ? new Date(next).toISOString() : null,
  };
}
