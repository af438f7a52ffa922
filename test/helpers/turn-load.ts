// A steady turn load on a served keel for the backup tests: `submitters` loops, each
// keeping one turn in flight on its own scope (submit, then wait for the run), recording
// every run the API acknowledged (202/200 with a run_id) and when.

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

async function postJson(url: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
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
      const submitted = await postJson(`${tenantUrl}/turns`, {
        agent: options.agent,
        scope: `s${worker}`,
        payload: { text: `turn ${worker}/${seq}` },
        request_id: `r-${worker}-${seq}`,
      });
      const runId = (submitted.body as { run_id?: unknown }).run_id;
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
