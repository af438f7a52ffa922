// Child processes for the demo: `keel fixture-model` and `keel serve` started through
// bin/keel.js on free loopback ports, each awaited until it prints its ready line, and
// stopped (or SIGKILLed) by the demo.

import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/keel.js', import.meta.url));
const READY_TIMEOUT_MS = 30_000;

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
): Promise<KeelChild> {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`keel ${args[0]} did not become ready in ${READY_TIMEOUT_MS} ms\n${stderr}`),
      );
    }, READY_TIMEOUT_MS);
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-20_000);
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const match = ready.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1] ?? '', exited, stderr: () => stderr });
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
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
