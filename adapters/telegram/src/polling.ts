// Long polling with the offset under our control: an update is confirmed (the next
// getUpdates' offset passes it) only after its handler finished, i.e. after keel
// accepted the turn. A failing handler stops the batch; the same update is fetched again.

import type { Api, Bot } from 'grammy';

/** grammy types its signal with the abort-controller shim's class; Node's is the same thing. */
export type GrammySignal = Parameters<Api['getUpdates']>[1];

export interface PollingLog {
  (line: string): void;
}

export async function pollUpdates(
  bot: Bot,
  signal: AbortSignal,
  log: PollingLog,
  backoffMs = 1000,
): Promise<void> {
  let offset = 0;
  while (!signal.aborted) {
    let updates;
    try {
      updates = await bot.api.getUpdates({ offset, timeout: 25 }, signal as GrammySignal);
    } catch (error) {
      if (signal.aborted) return;
      log(`getUpdates failed: ${(error as Error).message}`);
      await pause(backoffMs, signal);
      continue;
    }
    for (const update of updates) {
      try {
        await bot.handleUpdate(update);
        offset = update.update_id + 1;
      } catch (error) {
        log(`update ${update.update_id} not accepted, retrying: ${(error as Error).message}`);
        await pause(backoffMs, signal);
        break;
      }
    }
  }
}

export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}
