// GET T/runs/:id/events: Server-Sent Events for one run. The trace is replayed from
// Last-Event-ID (or the start), then the stream follows the run live until its terminal
// event. No timer per subscriber: the store's `run.event` / `run.terminal` notifications
// trigger a read of the trace after the last sent seq, and live-only `model.delta`
// chunks come from the in-process live events. Any number of subscribers per run.
//
// A subscriber gets each model call's complete text: just before the call's
// `model.response`, if the deltas it was sent for that step (plus any still held) do not
// add up to the response's text — it connected after the call or in the middle of it,
// resumed with Last-Event-ID mid-call, got a failed attempt's partial deltas before a
// retry's, or nobody watched and a provider with stream = "when-watched" asked for the
// whole answer — it gets the call's text as one `model.delta` with `whole: true` instead
// of the held deltas. A client that builds the answer from deltas replaces, rather than
// appends to, a step's text on `whole`, so it has all of it however it connected.

import { z } from 'zod';
import { KeelError } from '../../errors.ts';
import type { LiveEvent } from '../../events.ts';
import { endsStream } from '../../events.ts';
import type { TraceEvent } from '../../types.ts';
import { isTerminal } from '../../types.ts';
import type { ApiDepsWith, ZodApp } from '../deps.ts';
import { nameSchema } from '../schemas.ts';
import type { SseStream } from '../sse.ts';
import { openSseStream, runEventMessage } from '../sse.ts';
import type { RunStore, StoreChanges } from '../../store/store.ts';

type Deps = ApiDepsWith<RunStore & StoreChanges>;

const HEARTBEAT_MS = 15_000;
const PAGE = 500;

const eventParams = z.strictObject({
  tenant: nameSchema,
  id: z.string().min(1).max(64).describe('run id (UUIDv7)'),
});
const eventHeaders = z.looseObject({
  'last-event-id': z
    .string()
    .regex(/^\d{1,10}$/, 'expected the seq of the last event received')
    .optional()
    .describe('resume after this event (the `id` of the last message received)'),
});

/** Follows one run for one subscriber; every read is triggered by a notification. */
class RunFeed {
  private reading: Promise<void> | null = null;
  private readAgain = false;
  private readonly heldDeltas: LiveEvent[] = [];
  /** Per model step not yet answered: the text of the deltas this subscriber was sent. */
  private readonly sentText = new Map<number, string>();
  /**
   * Model steps whose response was sent: a delta of one that comes later (relayed from
   * another process, overtaken by the stored response) would repeat text already sent.
   */
  private readonly answeredSteps = new Set<number>();

  constructor(
    private readonly deps: Deps,
    private readonly tenant: string,
    private readonly runId: string,
    private lastSeq: number,
    private readonly sse: SseStream,
  ) {}

  /**
   * Reads and sends everything after lastSeq; re-reads if notified meanwhile. Resolves
   * when the read in flight (with its re-reads) is done.
   */
  pump(): Promise<void> {
    if (this.reading) {
      this.readAgain = true;
      return this.reading;
    }
    const reading = this.drain().finally(() => {
      if (this.reading !== reading) return;
      this.reading = null;
      // A notification that landed after the last read's check still gets its read.
      if (this.readAgain && !this.sse.closed) void this.pump();
    });
    this.reading = reading;
    return reading;
  }

  private async drain(): Promise<void> {
    try {
      do {
        this.readAgain = false;
        if (await this.readAll()) return;
      } while (this.readAgain && !this.sse.closed);
      for (const delta of this.heldDeltas.splice(0)) this.sendDelta(delta);
    } catch {
      // The store went away (shutdown) or the run was deleted: end the stream.
      this.sse.end();
    }
  }

  /** True when the stream ended (terminal event sent, or the run is gone). */
  private async readAll(): Promise<boolean> {
    for (;;) {
      if (this.sse.closed) return true;
      const events = await this.deps.store.getTrace(this.tenant, this.runId, this.lastSeq, PAGE);
      if (events === null) {
        this.sse.end();
        return true;
      }
      for (const event of events) {
        this.sendPersisted(event);
        if (endsStream(event)) {
          this.sse.end();
          return true;
        }
      }
      if (events.length < PAGE) return false;
    }
  }

  private sendPersisted(event: TraceEvent): void {
    this.lastSeq = event.seq;
    if (event.type === 'model.response') this.catchUp(event);
    this.sse.send(runEventMessage(event));
  }

  /**
   * Before a call's response: the call's deltas still held (a read was in flight when they
   * came; they were published before the response was stored) — or, when what this
   * subscriber was sent of the call plus those would not be the response's text, the
   * call's whole text as one delta instead.
   */
  private catchUp(event: Extract<TraceEvent, { type: 'model.response' }>): void {
    const { step, text } = event.data;
    this.answeredSteps.add(step);
    // One pass: this step's held deltas out (in order), the others kept.
    const held: LiveEvent[] = [];
    let kept = 0;
    for (const delta of this.heldDeltas) {
      if (delta.data.step === step) held.push(delta);
      else this.heldDeltas[kept++] = delta;
    }
    this.heldDeltas.length = kept;
    const wouldHave = (this.sentText.get(step) ?? '') + held.map((d) => d.data.text).join('');
    if (text !== undefined && text !== '' && wouldHave !== text) {
      this.sendDelta({ type: 'model.delta', data: { step, text, whole: true } });
    } else {
      for (const delta of held) this.sendDelta(delta);
    }
    // No later delta of an answered step is sent (see live), so its text is done with.
    this.sentText.delete(step);
  }

  private sendDelta(event: LiveEvent): void {
    const { step, text, whole } = event.data;
    this.sentText.set(step, whole ? text : (this.sentText.get(step) ?? '') + text);
    this.sse.send(runEventMessage(event));
  }

  /** Deltas wait while a read is in flight, so they follow the events before them. */
  live(event: LiveEvent): void {
    if (this.answeredSteps.has(event.data.step)) return;
    if (this.reading) this.heldDeltas.push(event);
    else this.sendDelta(event);
  }
}

export function eventRoutes(app: ZodApp, deps: Deps): void {
  const { store } = deps;
  app.get(
    '/v1/tenants/:tenant/runs/:id/events',
    {
      config: { auth: 'tenant', long_lived: true },
      schema: {
        tags: ['runs'],
        description:
          'Server-Sent Events: the trace from Last-Event-ID (or the start), then live events incl. `model.delta`; ends after the terminal event.',
        params: eventParams,
        headers: eventHeaders,
      },
    },
    async (request, reply) => {
      const { tenant, id } = request.params;
      const run = await store.getRun(tenant, id);
      if (!run) throw new KeelError('RUN_NOT_FOUND', `run ${id} not found`);
      const after = Number(request.headers['last-event-id'] ?? 0);

      void reply.hijack();
      const sse = openSseStream(reply.raw, { 'x-request-id': request.id }, HEARTBEAT_MS);
      const feed = new RunFeed(deps, tenant, id, after, sse);
      // Subscribed before the first read, so nothing committed in between is missed.
      const unsubscribeStore = store.subscribe((change) => {
        // store.resync: events may have been missed; the pump replays from the last seq.
        if (change.kind === 'store.resync') void feed.pump();
        else if (change.run_id === id && change.kind !== 'run.queued') void feed.pump();
      }, id);
      const unsubscribeLive = deps.live?.subscribe(id, (event) => feed.live(event));
      sse.onClose(() => {
        unsubscribeStore();
        unsubscribeLive?.();
      });

      await feed.pump();
      if (sse.closed) return;
      // Resumed past the terminal event: nothing more will come. Read once more first,
      // in case the run ended between the replay and this check.
      const now = await store.getRun(tenant, id).catch(() => null);
      if (!now || isTerminal(now.status)) {
        await feed.pump();
        sse.end();
      }
    },
  );
}
