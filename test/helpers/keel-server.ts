// A whole keel (store + worker + API) in this process on 127.0.0.1:<free port> with a
// temp data dir and no admin token (loopback), for SSE, CLI and provider e2e tests.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import type { Keel, KeelOptions } from '../../src/main.ts';
import { startKeel } from '../../src/main.ts';

export interface TestKeel extends Keel {
  dir: string;
  close(): Promise<void>;
}

/** `toml` is written as the keel.toml; `env` holds the env vars the config reads. */
export async function startTestKeel(
  options: { toml?: string; env?: NodeJS.ProcessEnv; keel?: KeelOptions } = {},
): Promise<TestKeel> {
  const dir = await mkdtemp(join(tmpdir(), 'keel-e2e-'));
  let configPath: string | undefined;
  if (options.toml !== undefined) {
    configPath = join(dir, 'keel.toml');
    await writeFile(configPath, options.toml);
  }
  const config = loadConfig(
    { data_dir: dir, listen: '127.0.0.1:0', ...(configPath && { config: configPath }) },
    options.env ?? {},
    dir,
  );
  const keel = await startKeel(config, {
    logger: pino({ level: 'silent' }),
    shutdownGraceMs: 1000,
    ...options.keel,
  });
  return {
    ...keel,
    dir,
    async close() {
      await keel.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
