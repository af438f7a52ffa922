// The finalization transaction's way into the shared thread repository
// (../repositories/threads.ts).

import type { TurnExtras } from '../rules/threads.ts';
import * as threads from '../repositories/threads.ts';
import type { Tx } from './context.ts';
import type { RunRow } from './rows.ts';
import { within } from './steps.ts';

export function appendTurnToThread(
  tx: Tx,
  run: RunRow,
  replyText: string,
  contextWindow: number,
  steeredTexts: readonly string[] = [],
  turn: TurnExtras = {},
): Promise<void> {
  return within(tx, (writes) =>
    threads.appendTurnToThread(writes, run, replyText, contextWindow, steeredTexts, turn),
  );
}
