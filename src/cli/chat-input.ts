// The terminal side of `keel chat`: lines typed (queued while an answer streams, so
// type-ahead is kept), Ctrl-C as an event instead of a dead process, and end of input as
// `null` — never a read from a closed readline (Node's "readline was closed" error).

import type { Interface } from 'node:readline';
import { createInterface } from 'node:readline';

export class ChatInput {
  private readonly terminal: Interface;
  private readonly queued: string[] = [];
  private waiting: ((line: string | null) => void) | null = null;
  private closed = false;

  /**
   * `onLine` sees each line first and returns true when it handled it (e.g. `/cancel`
   * while an answer streams); `onInterrupt` is called for every Ctrl-C.
   */
  constructor(
    prompt: string,
    private readonly hooks: { onLine: (line: string) => boolean; onInterrupt: () => void },
  ) {
    this.terminal = createInterface({ input: process.stdin, output: process.stdout, prompt });
    this.terminal.on('line', (line) => {
      if (this.hooks.onLine(line)) return;
      if (this.waiting) {
        const resolve = this.waiting;
        this.waiting = null;
        resolve(line);
      } else {
        this.queued.push(line);
      }
    });
    this.terminal.on('SIGINT', () => this.hooks.onInterrupt());
    this.terminal.once('close', () => {
      this.closed = true;
      this.waiting?.(null);
      this.waiting = null;
    });
  }

  /** Shows the prompt and resolves with the next line, or null at end of input. */
  next(): Promise<string | null> {
    const line = this.queued.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.closed) return Promise.resolve(null);
    this.terminal.prompt();
    return new Promise((resolve) => (this.waiting = resolve));
  }

  /** Shows the prompt again (after a Ctrl-C there); the pending next() still waits. */
  prompt(): void {
    if (!this.closed) this.terminal.prompt();
  }

  /** Drops what was typed on the prompt line (after a Ctrl-C there). */
  clearLine(): void {
    if (!this.closed) this.terminal.write(null, { ctrl: true, name: 'u' });
  }

  close(): void {
    if (!this.closed) this.terminal.close();
  }
}
