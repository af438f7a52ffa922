// The finalization write's way into the shared thread repository
// (../repositories/threads.ts), in SQLite's synchronous write.

import type { TurnExtras } from '../rules/threads.ts';
import type { StoreChange } from '../store.ts';
import * as threads from '../repositories/threads.ts';
import type { StoreContext } from './context.ts';
import type { RunRow } from './rows.ts';
import { within } from './steps.ts';

export function appendTurnToThread(
  ctx: StoreContext,
  changes: StoreChange[],
  run: RunRow,
  replyText: string,
  contextWindow: number,
  now: number,
  steeredTexts: readonly string[] = [],
  turn: TurnExtras = {},
): void {
  within(
    ctx,
    (tx) => threads.appendTurnToThread(tx, run, replyText, contextWindow, steeredTexts, turn),
    { now, changes },
  );
}
