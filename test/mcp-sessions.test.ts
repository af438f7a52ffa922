// The session layer alone (src/mcp/sessions.ts) against keel's stdio test server: one
// process per (tenant, server), and no listener left on a caller's signal after a call
// (the SDK never removes its own; a run's long-lived signal kept every finished request
// alive — 13 MB over 6000 calls in `npm run bench -- mcp` before the fix).

import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import pino from 'pino';
import { createMcpSessions, restartDelayMs } from '../src/mcp/sessions.ts';
import { waitFor } from './helpers/wait-for.ts';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const SERVER = join(import.meta.dirname, 'fixtures/mcp-test-server.mjs');
/** Sessions of the one `own` stdio server (the test server), closed after `idleMs` unused. */
function ownSessions(idleMs: number) {
  return createMcpSessions({
    settings: {
      stdio: { own: { command: process.execPath, args: [SERVER], env: {}, tenants: null } },
      idle_ms: idleMs,
      max_message_bytes: 1_048_576,
      allow_hosts: [],
    },
    secrets: { getSecretValue: async () => null },
    logger: pino({ level: 'silent' }),
  });
}
const sessions = ownSessions(600_000);
const keyOf = (tenant: string) => ({
  tenant,
  server: 'own',
  version: 'v1',
  transport: { type: 'stdio' as const, server: 'own' },
});

after(() => sessions.closeAll());

describe('MCP sessions', () => {
  it('leaves no listener on the caller’s signal after a call', async () => {
    const run = new AbortController();
    for (let i = 0; i < 20; i++) {
      const result = await sessions.call(
        keyOf('a'),
        'read',
        {},
        {
          signal: run.signal,
          timeoutMs: 10_000,
          idempotencyKey: `k${i}`,
        },
      );
      assert.equal(result.isError, undefined);
    }
    assert.equal(getEventListeners(run.signal, 'abort').length, 0);
  });

  it('each tenant gets its own process of a declared server, shared by its calls', async () => {
    const signal = new AbortController().signal;
    const options = { signal, timeoutMs: 10_000, idempotencyKey: 'k' };
    const pidOf = async (tenant: string) => {
      const result = await sessions.call(keyOf(tenant), 'read', {}, options);
      const [item] = result.content as { text: string }[];
      return (JSON.parse(item?.text ?? '{}') as { pid: number }).pid;
    };
    const a1 = await pidOf('a');
    const b1 = await pidOf('b');
    assert.notEqual(a1, b1);
    assert.equal(await pidOf('a'), a1);
    assert.equal(sessions.pid('a', 'own'), a1);
  });

  it('a session with no call for idle_ms is closed and its process ends', async () => {
    const idle = ownSessions(50);
    const signal = new AbortController().signal;
    await idle.call(keyOf('a'), 'read', {}, { signal, timeoutMs: 10_000, idempotencyKey: 'k' });
    const pid = idle.pid('a', 'own');
    assert.ok(pid);
    await waitFor('the idle session is closed', () => idle.pid('a', 'own') === null);
    await waitFor('its process ended', () => !alive(pid));
  });

  it('restart delays back off: at once, then 250 ms doubling, at most 30 s', () => {
    assert.deepEqual([1, 2, 3, 4, 20].map(restartDelayMs), [0, 250, 500, 1000, 30_000]);
  });
});
