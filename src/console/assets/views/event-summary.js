// One line for a trace event in the run view's timeline, typed by the server's event
// union (src/events.ts, through JSDoc: this file is served as is). Every type has its
// case, so a type added to the union fails `npm run typecheck` here until it is shown; a
// type the server sends that this console does not know yet shows its data as JSON.

import { duration } from '../format.js';

/** @typedef {import('../../../events.ts').TraceEvent} TraceEvent */
/** @typedef {import('../../../events.ts').StreamEvent} StreamEvent */

/** The data of an event whose type the union (and so the switch below) does not have. */
function futureData(/** @type {never} */ event) {
  /** @type {{data?: unknown}} */
  const future = event;
  return future.data;
}

/** @param {TraceEvent} event */
export function eventSummary(event) {
  switch (event.type) {
    case 'model.request':
      return `step ${event.data.step} → ${event.data.model}`;
    case 'model.response': {
      const d = event.data;
      return `step ${d.step}: ${d.finish_reason}, ${d.usage.input_tokens} in / ${d.usage.output_tokens} out, ${duration(d.latency_ms)}`;
    }
    case 'model.retry':
      return `attempt ${event.data.attempt} failed, retrying in ${duration(event.data.delay_ms)}`;
    case 'run.note':
      return event.data.text;
    case 'run.failed':
      return `${event.data.error.code}: ${event.data.error.message}`;
    case 'run.cancelled':
      return event.data.reason ?? 'cancelled';
    case 'approval.requested':
      return `${event.data.name} waits for a person's decision (${event.data.call_id})`;
    case 'approval.decided': {
      const d = event.data;
      return `${d.call_id} ${d.status}${d.note ? `: ${d.note}` : ''}`;
    }
    case 'run.succeeded': {
      const d = event.data;
      return `${d.steps} steps, ${d.usage.input_tokens} in / ${d.usage.output_tokens} out`;
    }
    // Shown as one timeline item each (ToolItem in run.js); the name, if asked.
    case 'tool.call':
    case 'tool.result':
      return event.data.name;
    // Their data as JSON: what there is to read is in it.
    case 'run.queued':
    case 'run.claimed':
    case 'run.resumed':
    case 'run.released':
    case 'run.steered':
    case 'memory.recall':
    case 'memory.flush':
    case 'memory.flushed':
    case 'context.compacted':
      return JSON.stringify(event.data);
    default: {
      const data = futureData(event);
      return data && typeof data === 'object' && Object.keys(data).length > 0
        ? JSON.stringify(data)
        : '';
    }
  }
}
