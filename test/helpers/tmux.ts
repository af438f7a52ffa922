// A pseudo-terminal for CLI tests: one tmux server per test process (its own socket), a
// session running a command, keys sent to it and its screen read back.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const TMUX = '/usr/bin/tmux';
export const NO_TMUX = !existsSync(TMUX) && 'tmux is not installed (/usr/bin/tmux)';

export class TmuxSession {
  private readonly socket = `keel-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

  /** Starts `argv` (quoted for the shell) in `cwd` with `env` added, 200×50. */
  constructor(
    argv: string[],
    options: { cwd: string; env: Record<string, string>; afterExit?: string },
  ) {
    const command = argv.map((part) => `'${part.replaceAll("'", `'\\''`)}'`).join(' ');
    const environment = Object.entries(options.env).flatMap(([key, value]) => [
      '-e',
      `${key}=${value}`,
    ]);
    this.tmux(
      'new-session',
      '-d',
      '-s',
      'main',
      '-x',
      '200',
      '-y',
      '50',
      '-c',
      options.cwd,
      ...environment,
      options.afterExit ? `${command}; ${options.afterExit}` : command,
    );
  }

  tmux(...args: string[]): string {
    return execFileSync(TMUX, ['-L', this.socket, ...args], { encoding: 'utf8' });
  }

  /** Keys as tmux names them: text, 'Enter', 'C-c', 'C-d'. */
  send(...keys: string[]): void {
    this.tmux('send-keys', '-t', 'main', ...keys);
  }

  screen(): string {
    return this.tmux('capture-pane', '-p', '-J', '-t', 'main', '-S', '-500');
  }

  async shows(pattern: RegExp, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let screen = '';
    while (Date.now() < deadline) {
      screen = this.screen();
      if (pattern.test(screen)) return screen;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.fail(`the terminal never showed ${pattern}:\n${screen}`);
  }

  /** True once the session (its command) has ended. */
  async ended(timeoutMs = 10_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      try {
        this.tmux('has-session', '-t', 'main');
      } catch {
        return true;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return false;
  }

  close(): void {
    try {
      this.tmux('kill-server');
    } catch {
      // already gone with its last session
    }
  }
}
