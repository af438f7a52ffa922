// The approval crash cases (docs/approvals.md, docs/reliability.md), shared by
// test/crash-approvals.test.ts and test/crash-approvals-deny.test.ts: a real `keel serve`
// child killed with SIGKILL at every point of an approval's life — before and after the
// request commits, while the run waits, before and after the decision commits, and
// before and after the approved tool runs — then restarted on the same data dir. The
// effect sink (a separate process) counts executions. Each case must end with: exactly
// one approval request, exactly one decision, the run ended once (one terminal event),
// exactly one execution after approve (one idempotency key; the effectful sink_write
// once), none after deny or timeout, and the model given the decision's result.

import assert from 'node:assert/strict';
import { sqliteCrashBackend } from './crash-backend.ts';
import type { CrashBackend } from './crash-backend.ts';
import type { EffectSink, Served } from './crash-harness.ts';
import { call, serve, TENANT, tempDir, waitTerminal } from './crash-harness.ts';
import { waitFor } from './wait-for.ts';
import { setTimeout as delay } from 'node:timers/promises';

type Decision = 'approve' | 'deny' | 'timeout';
// Responses are read loosely; `any` keeps assertions short and is test-only.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

export interface ApprovalCase {
  /** A fault point name, or `waiting`: a SIGKILL while the run waits; null: no kill. */
  point: string | null;
  decision: Decision;
  tool: 'sink_put' | 'sink_write';
}

interface CaseFigures {
  kills: number;
  executions: number;
  keys: number;
  requests: number;
  decisions: number;
  terminal_events: number;
  result: string;
}

const NOTE = 'not on a Sunday';

/** A keel on the data dir that is restarted (without fault points) whenever it died. */
class Life {
  kills = 0;
  private dead = false;
  private constructor(
    private served: Served,
    private readonly dataDir: string,
    private readonly env: Record<string, string>,
  ) {
    this.watch();
  }

  /** Armable (crash-harness.ts serve): no fault point until `arm` names one. */
  static async start(dataDir: string, env: Record<string, string>): Promise<Life> {
    return new Life(await serve(dataDir, env, { armable: true }), dataDir, env);
  }

  private watch(): void {
    const served = this.served;
    void served.exited.then(() => {
      if (this.served === served) this.dead = true;
    });
  }

  /** The URL of a live keel: a dead one is counted and replaced. */
  async url(): Promise<string> {
    if (this.dead) {
      this.kills += 1;
      this.dead = false;
      this.served = await serve(this.dataDir, this.env, { armable: true });
      this.watch();
    }
    return this.served.url;
  }

  /**
   * A request to a live keel: when it dies mid-request (a fault point fired), the call
   * is repeated on the restarted one. Only for reads and requests that are safe to repeat.
   */
  async call(method: string, path: string, body?: unknown): Promise<Loose> {
    for (let tries = 0; ; tries += 1) {
      try {
        return await call(await this.url(), method, path, body);
      } catch (error) {
        if (tries >= 100) throw error;
        await delay(200);
      }
    }
  }

  /** The live keel dies at `spec` (KEEL_FAILPOINTS syntax); a restarted one has none. */
  async arm(spec: string): Promise<void> {
    await this.url();
    await this.served.arm(spec);
  }

  async killNow(): Promise<void> {
    await this.served.kill();
  }

  async stop(): Promise<void> {
    await this.served.kill();
  }
}

async function runStatus(life: Life, runId: string): Promise<string | null> {
  try {
    const got = await call(await life.url(), 'GET', `/v1/tenants/${TENANT}/runs/${runId}`);
    return got.body.run?.status ?? null;
  } catch {
    return null; // killed mid-request: the next poll restarts it
  }
}

async function approvalOf(life: Life, runId: string): Promise<{ call_id: string; status: string }> {
  const listed = await life.call('GET', `/v1/tenants/${TENANT}/runs/${runId}/approvals`);
  const [approval] = listed.body.approvals as { call_id: string; status: string }[];
  assert.ok(approval, 'the run has its approval');
  return approval;
}

async function decide(life: Life, runId: string, decision: 'approve' | 'deny'): Promise<void> {
  const { call_id } = await approvalOf(life, runId);
  const path = `/v1/tenants/${TENANT}/runs/${runId}/approvals/${call_id}`;
  const body = { decision, ...(decision === 'deny' && { note: NOTE }) };
  try {
    const answered = await call(await life.url(), 'POST', path, body);
    assert.equal(answered.status, 200, JSON.stringify(answered.body));
  } catch (error) {
    if (error instanceof assert.AssertionError) throw error;
    // Killed at the decision: committed or not, the approval says which.
    await waitFor('keel back after the kill', async () => (await runStatus(life, runId)) !== null, {
      timeoutMs: 20_000,
      everyMs: 100,
    });
    const after = await approvalOf(life, runId);
    if (after.status === 'pending') {
      const again = await call(await life.url(), 'POST', path, body);
      assert.equal(again.status, 200, JSON.stringify(again.body));
    }
  }
  // A second decision is refused whatever it says.
  const second = await life.call('POST', path, { decision: 'approve' });
  assert.equal(second.status, 409);
  assert.equal(second.body.error.code, 'APPROVAL_DECIDED');
}

/**
 * The cases one after the other on one data dir, each with its own agent and scope: the
 * keel restarted after one case's kill (without fault points) is armed with the next
 * case's fault point, so each kill costs one `keel serve` start-up, not two. Every case
 * is inspected (and asserted) on the stopped data dir.
 */
export async function approvalCrashCases(
  cases: ApprovalCase[],
  sink: EffectSink,
  backend: CrashBackend = sqliteCrashBackend,
): Promise<CaseFigures[]> {
  const dataDir = tempDir('keel-approval-crash-');
  const env = { KEEL_TEST_EFFECT_SINK_URL: sink.url, ...backend.env(dataDir) };
  const life = await Life.start(dataDir, env);
  const ran: { c: ApprovalCase; runId: string; kills: number }[] = [];
  try {
    await call(await life.url(), 'POST', '/v1/tenants', { name: TENANT });
    for (const [index, c] of cases.entries()) {
      const killsBefore = life.kills;
      const runId = await approvalCrashCase(life, c, `a${index}`, `approvals-${index}`);
      ran.push({ c, runId, kills: life.kills - killsBefore });
    }
  } finally {
    await life.stop();
  }
  const figures: CaseFigures[] = [];
  for (const { c, runId, kills } of ran) {
    figures.push(await inspect(c, runId, dataDir, sink, backend, kills));
  }
  return figures;
}

/** One case on the live keel of `life`; returns its run once it succeeded. */
async function approvalCrashCase(
  life: Life,
  c: ApprovalCase,
  agentName: string,
  scope: string,
): Promise<string> {
  if (c.point && c.point !== 'waiting') await life.arm(`${c.point}=kill`);
  const url = await life.url();
  const agent = await call(url, 'PUT', `/v1/tenants/${TENANT}/agents/${agentName}`, {
    model: 'fixture/echo',
    require_approval: ['sink_*'],
    ...(c.decision === 'timeout' && { approval_timeout_ms: 1000 }),
  });
  assert.ok(agent.status < 300, JSON.stringify(agent.body));
  const submitted = await call(url, 'POST', `/v1/tenants/${TENANT}/turns`, {
    agent: agentName,
    scope,
    payload: { text: `@call ${c.tool} {"value":"pay the rent"}\nrent` },
  });
  const runId = submitted.body.run_id as string;
  await waitFor('the run waiting', async () => (await runStatus(life, runId)) === 'waiting', {
    timeoutMs: 30_000,
    everyMs: 50,
  });
  if (c.point === 'waiting') {
    await life.killNow();
    await life.url();
  }
  if (c.decision !== 'timeout') await decide(life, runId, c.decision);
  let final: string | null = null;
  await waitFor(
    'the run ended',
    async () => {
      try {
        final = await waitTerminal(await life.url(), runId);
        return true;
      } catch {
        return false; // killed while waiting for the end: restart and wait again
      }
    },
    { timeoutMs: 60_000, everyMs: 100 },
  );
  assert.equal(final, 'succeeded');
  return runId;
}

async function inspect(
  c: ApprovalCase,
  runId: string,
  dataDir: string,
  sink: EffectSink,
  backend: CrashBackend,
  kills: number,
): Promise<CaseFigures> {
  const store = await backend.open(dataDir);
  try {
    const trace = (await store.getTrace(TENANT, runId, 0, 10_000)) ?? [];
    const count = (type: string): number => trace.filter((e) => e.type === type).length;
    const terminal = trace.filter((e) =>
      ['run.succeeded', 'run.failed', 'run.cancelled'].includes(e.type),
    ).length;
    const results = (await store.loadEntries(runId)).filter((e) => e.kind === 'tool_result');
    assert.equal(results.length, 1, 'one result for the one call');
    const result = results[0]?.kind === 'tool_result' ? results[0].body : null;
    const effects = await sink.effects(runId);
    const figures: CaseFigures = {
      kills,
      executions: effects.length,
      keys: new Set(effects.map((e) => e.idempotency_key)).size,
      requests: count('approval.requested'),
      decisions: count('approval.decided'),
      terminal_events: terminal,
      result: result?.ok ? 'ok' : (result?.error?.code ?? 'none'),
    };
    const label = `${c.point ?? 'no kill'} / ${c.decision} / ${c.tool}`;
    console.log(`approval crash [${backend.name}] ${label}: ${JSON.stringify(figures)}`);
    assert.equal(figures.requests, 1, `${label}: one request`);
    assert.equal(figures.decisions, 1, `${label}: one decision`);
    assert.equal(figures.terminal_events, 1, `${label}: the run ended once`);
    if (c.point && c.point !== 'waiting') assert.ok(kills >= 1, `${label}: the kill fired`);
    if (c.decision === 'approve') {
      assert.equal(figures.keys, 1, `${label}: one effect`);
      if (c.tool === 'sink_write') assert.equal(figures.executions, 1, `${label}: ran once`);
      const expected =
        c.tool === 'sink_write' && c.point === 'tool.after_call' ? 'OUTCOME_UNKNOWN' : 'ok';
      assert.equal(figures.result, expected, `${label}: the model's result`);
    } else {
      assert.equal(figures.executions, 0, `${label}: nothing ran`);
      const code = c.decision === 'deny' ? 'APPROVAL_DENIED' : 'APPROVAL_TIMEOUT';
      assert.equal(figures.result, code);
      if (c.decision === 'deny') assert.equal(result?.error?.message, NOTE);
    }
    return figures;
  } finally {
    await store.close();
  }
}

/** The approve path: after the request commits, while waiting, after the decision commits. */
export const APPROVE_CASES: ApprovalCase[] = [
  { point: 'approval.request.after_commit', decision: 'approve', tool: 'sink_put' },
  { point: 'waiting', decision: 'approve', tool: 'sink_put' },
  { point: 'approval.decide.after_commit', decision: 'approve', tool: 'sink_put' },
];

/** Approved, then killed while the tool runs: the effect rules decide, exactly once. */
export const TOOL_CASES: ApprovalCase[] = [
  { point: 'tool.before_call', decision: 'approve', tool: 'sink_put' },
  { point: 'tool.after_call', decision: 'approve', tool: 'sink_put' },
  { point: 'tool.after_call', decision: 'approve', tool: 'sink_write' },
];

/**
 * On PostgreSQL (crash-approvals-postgres.test.ts): one kill at each point of an
 * approval's life — requested, waiting (with the timeout), decision committed, tool
 * running — and the paths where nothing may run (deny, timeout), kept to five cases so
 * the file stays short.
 */
export const POSTGRES_CASES: ApprovalCase[] = [
  { point: 'approval.request.after_commit', decision: 'approve', tool: 'sink_put' },
  { point: 'approval.decide.after_commit', decision: 'approve', tool: 'sink_put' },
  { point: 'tool.after_call', decision: 'approve', tool: 'sink_write' },
  { point: 'approval.decide.after_commit', decision: 'deny', tool: 'sink_write' },
  { point: 'waiting', decision: 'timeout', tool: 'sink_write' },
];

/** Kills before the commits, and deny / timeout (nothing may run). */
export const DENY_CASES: ApprovalCase[] = [
  { point: 'approval.request.before_commit', decision: 'approve', tool: 'sink_put' },
  { point: 'approval.decide.before_commit', decision: 'approve', tool: 'sink_put' },
  { point: 'approval.decide.after_commit', decision: 'deny', tool: 'sink_write' },
  { point: 'waiting', decision: 'deny', tool: 'sink_write' },
  { point: 'waiting', decision: 'timeout', tool: 'sink_write' },
];
