// Child processes for the demo: `keel fixture-model` and `keel serve` started through
// bin/keel.js on free loopback ports, each awaited until it prints its ready line, and
// stopped (or SIGKILLed) by the demo.

import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/keel.js', import.meta.url));
// Generous: on a loaded or small machine (2 cores busy, a Raspberry Pi) keel serve takes
// tens of seconds to start, and a demo that gives up then is a dead end. While waiting,
// the caller hears every WAITING_EVERY_MS that it is still starting.
const READY_TIMEOUT_MS = 180_000;
const WAITING_EVERY_MS = 10_000;

export interface StartOptions {
  timeoutMs?: number;
  /** Called every `waitingEveryMs` until the ready line, with the time waited so far. */
  onWaiting?: (elapsedMs: number) => void;
  waitingEveryMs?: number;
  /** The script run with node (default bin/keel.js); tests substitute a stand-in. */
  bin?: string;
}

export interface KeelChild {
  child: ChildProcess;
  /** The URL from the ready line. */
  url: string;
  exited: Promise<void>;
  stderr(): string;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Starts `keel <args>` and resolves once stdout prints a line matching `ready`. */
export function startKeelChild(
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  options: StartOptions = {},
): Promise<KeelChild> {
  const timeoutMs = options.timeoutMs ?? READY_TIMEOUT_MS;
  const child = spawn(process.execPath, [options.bin ?? BIN, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const started = Date.now();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const waiting = setInterval(
      () => options.onWaiting?.(Date.now() - started),
      options.waitingEveryMs ?? WAITING_EVERY_MS,
    );
    const done = (): void => {
      clearTimeout(timer);
      clearInterval(waiting);
    };
    const timer = setTimeout(() => {
      done();
      child.kill('SIGKILL');
      reject(
        new Error(
          `keel ${args[0]} did not become ready in ${timeoutMs / 1000} s (is the machine very busy?)\n${stderr}`,
        ),
      );
    }, timeoutMs);
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-20_000);
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const match = ready.exec(stdout);
      if (match) {
        done();
        resolve({ child, url: match[1] ?? '', exited, stderr: () => stderr });
      }
    });
    child.once('exit', (code, signal) => {
      done();
      reject(
        new Error(`keel ${args[0]} exited (${signal ?? code}) before it was ready\n${stderr}`),
      );
    });
  });
}

/** SIGTERM, then SIGKILL if the child has not exited after `graceMs`. */
export async function stopChild(child: KeelChild, graceMs = 5000): Promise<void> {
  if (child.child.exitCode !== null || child.child.signalCode !== null) return;
  child.child.kill('SIGTERM');
  const timer = setTimeout(() => child.child.kill('SIGKILL'), graceMs);
  await child.exited;
  clearTimeout(timer);
}
