// Steering at a step boundary (docs/agent-loop.md, "Steering"): before the model's next
// call — and before a final answer is finalized — the turns submitted with
// on_busy=steer for this run join its journal as user entries, so the model sees them
// next. The store takes them in one fenced transaction (exactly once: a turn the run did
// not take in time is an ordinary queued run of the lane and runs next).

import type { Failpoints } from '../failpoints.ts';
import type { PendingSteer } from '../store/store.ts';
import type { EntryBody, RunEntry, RunOutcome } from '../types.ts';
import type { RunJournal } from './journal.ts';
import { userText } from './model-input.ts';

/** A steered turn as its user entry: the same text rule as a run's own user entry. */
export function steeredEntry(steer: PendingSteer): EntryBody {
  return {
    kind: 'user',
    body: { text: userText(steer.input), payload: steer.input, steer_id: steer.steer_id },
  };
}

/**
 * The step boundary. true: turns were taken (the loop goes round again so the model
 * answers them). Fault point `steer.boundary_read` sits after a read that found none:
 * a turn steered from here until the run is finalized runs as the next run;
 * `steer.after_take` after a take that journaled some.
 */
export async function takeSteeredTurns(
  journal: Pick<RunJournal, 'takeSteers'>,
  failpoints: Failpoints,
): Promise<boolean> {
  const taken = await journal.takeSteers(steeredEntry);
  if (taken === 0) failpoints.hit('steer.boundary_read');
  // After the take committed (the turns are the run's entries), before the model is asked.
  else failpoints.hit('steer.after_take');
  return taken > 0;
}

/** A succeeded outcome carries the steered turns' texts: the thread keeps them in order. */
export function withSteeredTexts(outcome: RunOutcome, entries: readonly RunEntry[]): RunOutcome {
  if (outcome.status !== 'succeeded') return outcome;
  const texts = entries.flatMap((entry) =>
    entry.kind === 'user' && entry.body.steer_id !== undefined ? [entry.body.text] : [],
  );
  return texts.length > 0 ? { ...outcome, steered_texts: texts } : outcome;
}
