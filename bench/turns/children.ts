// Child processes of the turn benchmark: any command started and awaited until its stdout
// prints a ready line, its stdout drained (keel's info log goes there), stopped with
// SIGTERM then SIGKILL.

import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';

const READY_TIMEOUT_MS = 120_000;

export interface Child {
  process: ChildProcess;
  pid: number;
  /** The first capture group of the ready pattern. */
  ready: string;
  exited: Promise<void>;
  output(): string;
}

export function startChild(
  command: string,
  args: string[],
  options: {
    env?: NodeJS.ProcessEnv;
    cwd?: string;
    ready: RegExp;
    stdin?: boolean;
    /** How long until the ready line (default READY_TIMEOUT_MS). */
    readyTimeoutMs?: number;
  },
): Promise<Child> {
  const readyTimeoutMs = options.readyTimeoutMs ?? READY_TIMEOUT_MS;
  const child = spawn(command, args, {
    env: options.env ?? process.env,
    cwd: options.cwd,
    stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  let seen = '';
  let tail = '';
  let matched = false;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')}: not ready in ${readyTimeoutMs} ms\n${tail}`));
    }, readyTimeoutMs);
    const onData = (chunk: Buffer): void => {
      tail = (tail + chunk.toString('utf8')).slice(-8000);
      if (matched) return;
      seen = (seen + chunk.toString('utf8')).slice(-64_000);
      const match = options.ready.exec(seen);
      if (match) {
        matched = true;
        clearTimeout(timer);
        resolve({
          process: child,
          pid: child.pid ?? -1,
          ready: match[1] ?? '',
          exited,
          output: () => tail,
        });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (!matched) reject(new Error(`${args.join(' ')} exited (${signal ?? code})\n${tail}`));
    });
  });
}

export async function stopChild(child: Child, graceMs = 10_000): Promise<void> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return;
  child.process.kill('SIGTERM');
  const timer = setTimeout(() => child.process.kill('SIGKILL'), graceMs);
  await child.exited;
  clearTimeout(timer);
}
