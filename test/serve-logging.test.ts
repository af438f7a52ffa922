// `keel serve`'s request log as a user sees it on stderr: by default pino's JSON, one
// line per request (fastify's own "incoming request" / "request completed" pair is
// off); with --pretty, pino-pretty's human lines ("[HH:MM:SS.mmm] INFO: GET /path 200
// 3 ms …") and not one JSON line. Both are real `keel serve` processes.

import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { waitFor } from './helpers/wait-for.ts';
import { KEEL_CLI } from './helpers/keel-cli.ts';

const ROOT = new URL('..', import.meta.url).pathname;

interface Served {
  child: ChildProcess;
  url: string;
  stderr(): string;
}

const children: ChildProcess[] = [];
const dirs: string[] = [];

async function serve(extra: string[]): Promise<Served> {
  const dir = await mkdtemp(join(tmpdir(), 'keel-logging-'));
  dirs.push(dir);
  await writeFile(join(dir, 'keel.toml'), '[memory]\nembedder = "hash"\n');
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('KEEL_')) env[key] = value;
  }
  const child = spawn(
    process.execPath,
    [
      ...KEEL_CLI,
      'serve',
      '--config',
      join(dir, 'keel.toml'),
      '--data-dir',
      dir,
      '--listen',
      '127.0.0.1:0',
      ...extra,
    ],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const url = await waitFor(
    `keel serve ${extra.join(' ')} listening (stderr: ${stderr})`,
    () => /keel listening on (http:\/\/\S+)/.exec(stdout)?.[1],
    { timeoutMs: 120_000, everyMs: 50 },
  );
  return { child, url, stderr: () => stderr };
}

async function logLinesOf(served: Served, requestId: string): Promise<string[]> {
  const response = await fetch(`${served.url}/v1/tenants`, {
    headers: { 'x-request-id': requestId },
  });
  assert.equal(response.status, 200);
  await response.arrayBuffer();
  await waitFor(`the log line of ${requestId}`, () => served.stderr().includes(requestId), {
    timeoutMs: 30_000,
  });
  // A second request after it: had the first one logged two lines, both are out by now.
  const marker = `${requestId}-after`;
  await (await fetch(`${served.url}/healthz`, { headers: { 'x-request-id': marker } })).text();
  await waitFor(`the log line of ${marker}`, () => served.stderr().includes(marker), {
    timeoutMs: 30_000,
  });
  return served.stderr().split('\n').filter(Boolean);
}

describe('keel serve request logs', () => {
  let plain: Served;
  let pretty: Served;
  before(async () => {
    [plain, pretty] = await Promise.all([serve([]), serve(['--pretty'])]);
  });
  after(async () => {
    for (const child of children) child.kill('SIGKILL');
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('default: JSON lines, exactly one per request with method, path, status and time', async () => {
    const lines = await logLinesOf(plain, 'log-plain-1');
    for (const line of lines) assert.doesNotThrow(() => JSON.parse(line), `JSON line: ${line}`);
    const mine = lines.filter((line) => line.includes('"log-plain-1"'));
    assert.equal(mine.length, 1, `one line per request, got:\n${mine.join('\n')}`);
    const entry = JSON.parse(mine[0]!);
    assert.equal(entry.request_id, 'log-plain-1');
    assert.equal(entry.method, 'GET');
    assert.equal(entry.url, '/v1/tenants');
    assert.equal(entry.status, 200);
    assert.equal(typeof entry.ms, 'number');
  });

  it('--pretty: pino-pretty lines (time, level, message), no JSON line', async () => {
    const lines = await logLinesOf(pretty, 'log-pretty-1');
    const jsonLines = lines.filter((line) => {
      try {
        return typeof JSON.parse(line) === 'object';
      } catch {
        return false;
      }
    });
    assert.deepEqual(jsonLines, [], 'no JSON log line with --pretty');
    const mine = lines.filter((line) => line.includes('"log-pretty-1"'));
    assert.equal(mine.length, 1, `one line per request, got:\n${mine.join('\n')}`);
    // e.g. [19:45:49.798] INFO: GET /v1/tenants 200 152.3 ms {"request_id":"log-pretty-1",…}
    // (no colour codes: stderr is a pipe, not a terminal)
    assert.match(mine[0]!, /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: GET \/v1\/tenants 200 [\d.]+ ms /);
    assert.ok(!mine[0]!.includes('\u001b['), 'no ANSI colour on a pipe');
  });

  // Last: it stops the plain process. JSON lines go through a buffer; what keel logs as
  // it stops must still reach stderr before the process exits.
  it('default: on SIGTERM the last lines are written before the process exits', async () => {
    const exited = new Promise<number | null>((resolve) => plain.child.once('exit', resolve));
    plain.child.kill('SIGTERM');
    assert.equal(await exited, 0);
    const messages = plain
      .stderr()
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { msg: string }).msg);
    assert.deepEqual(messages.slice(-2), ['shutting down', 'stopped']);
  });
});
