// A steady turn load on a served keel for the backup tests: `submitters` loops, each
// keeping one turn in flight on its own scope (submit, then wait for the run), recording
// every run the API acknowledged (202/200 with a run_id) and when.

import assert from 'node:assert/strict';
import { requestJson } from './json-request.ts';

export interface AckedRun {
  runId: string;
  at: number;
}

export interface TurnLoad {
  /** Every acknowledged run so far, in acknowledgement order. */
  readonly acked: AckedRun[];
  /** Submissions answered with anything but 200/202. */
  refused(): number;
  /** Resolves once `count` runs were acknowledged (or `timeoutMs` passed). */
  reach(count: number, timeoutMs?: number): Promise<void>;
  /** Stops submitting and waits for the loops to end. */
  stop(): Promise<void>;
}

export function startTurnLoad(
  baseUrl: string,
  options: { tenant: string; agent: string; submitters: number },
): TurnLoad {
  const tenantUrl = `${baseUrl}/v1/tenants/${options.tenant}`;
  const acked: AckedRun[] = [];
  let refused = 0;
  let loading = true;
  const submitter = async (worker: number): Promise<void> => {
    for (let seq = 0; loading; seq += 1) {
      const submitted = await requestJson(tenantUrl, 'POST', '/turns', {
        agent: options.agent,
        scope: `s${worker}`,
        payload: { text: `turn ${worker}/${seq}` },
        request_id: `r-${worker}-${seq}`,
      });
      const runId: unknown = submitted.body?.run_id;
      if ((submitted.status !== 202 && submitted.status !== 200) || typeof runId !== 'string') {
        refused += 1;
        continue;
      }
      acked.push({ runId, at: Date.now() });
      await (await fetch(`${tenantUrl}/runs/${runId}/wait?timeout_ms=10000`)).arrayBuffer();
    }
  };
  const loops = Promise.all(
    Array.from({ length: options.submitters }, (_, worker) => submitter(worker)),
  );
  return {
    acked,
    refused: () => refused,
    async reach(count, timeoutMs = 15_000) {
      const started = Date.now();
      while (acked.length < count && Date.now() - started < timeoutMs) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async stop() {
      loading = false;
      await loops;
    },
  };
}

/**
 * Waits for each run (20 at a time, on a keel at `baseUrl`) and asserts it is there and
 * ended `succeeded`: after a restore, every acknowledged run must be. Returns how many.
 */
export async function expectRunsSucceeded(
  baseUrl: string,
  tenant: string,
  runIds: readonly string[],
): Promise<number> {
  let present = 0;
  for (let index = 0; index < runIds.length; index += 20) {
    const chunk = runIds.slice(index, index + 20);
    const runs = await Promise.all(
      chunk.map((id) =>
        requestJson(baseUrl, 'GET', `/v1/tenants/${tenant}/runs/${id}/wait?timeout_ms=20000`),
      ),
    );
    for (const [offset, result] of runs.entries()) {
      assert.equal(result.status, 200, `run ${chunk[offset]} is present`);
      assert.equal(result.body.timed_out, false, `run ${chunk[offset]} finishes`);
      assert.equal(result.body.run.status, 'succeeded', `run ${chunk[offset]} finishes`);
      present += 1;
    }
  }
  return present;
}
