// `keel serve --role …` children on one PostgreSQL schema, for the scale test and the
// scale benchmark: each child's output is kept (the stopped worker's LEASE_LOST lines
// are counted from it), and every child is SIGKILLed by cleanup.

import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_ONLY_ENV } from '../../src/config.ts';
import { KEEL_CLI } from './keel-cli.ts';
import { KEEL_TEST_SERVE } from './keel-test-serve-entry.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

export interface RoleProcess {
  role: string;
  url: string;
  pid: number;
  child: ChildProcess;
  /** stdout + stderr so far. */
  output(): string;
  exited: Promise<void>;
}

export class RoleProcesses {
  private readonly children = new Set<ChildProcess>();
  /** KEEL_HOME of the children: no keel.toml nor data of the real home is read or written. */
  private readonly home = mkdtempSync(join(tmpdir(), 'keel-roles-home-'));

  async start(
    role: 'api' | 'worker' | 'scheduler' | 'all',
    storeUrl: string,
    options: { config?: string; env?: Record<string, string> } = {},
  ): Promise<RoleProcess> {
    const env: NodeJS.ProcessEnv = {};
    for (const [key, value] of Object.entries(process.env)) {
      if (!key.startsWith('KEEL_')) env[key] = value;
    }
    // Test-only switches (the effect sink's tools) reach keel only through the test
    // entry; without them, the real `keel serve` runs.
    const testOnly = TEST_ONLY_ENV.some((name) => options.env?.[name] !== undefined);
    const entry = testOnly ? KEEL_TEST_SERVE : [...KEEL_CLI, 'serve'];
    const args = [...entry, '--role', role];
    args.push('--listen', '127.0.0.1:0', '--store-url', storeUrl);
    if (options.config) args.push('--config', options.config);
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { ...env, KEEL_HOME: this.home, KEEL_LOG_LEVEL: 'info', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.children.add(child);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    void exited.then(() => this.children.delete(child));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${role}: no ready line: ${output}`)),
        30_000,
      );
      const check = (): void => {
        const match = /keel listening on (http:\/\/\S+)/.exec(output);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      };
      child.stdout.on('data', check);
      void exited.then(() => reject(new Error(`${role} exited early: ${output}`)));
    });
    return { role, url, pid: child.pid ?? 0, child, output: () => output, exited };
  }

  async stopAll(): Promise<void> {
    const waits = [...this.children].map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGCONT');
          child.kill('SIGTERM');
          setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
        }),
    );
    await Promise.all(waits);
    rmSync(this.home, { recursive: true, force: true });
  }

  killAll(): void {
    for (const child of this.children) child.kill('SIGKILL');
    rmSync(this.home, { recursive: true, force: true });
  }
}
