// keel's public HTTP API as the adapter uses it, with a tenant token. Nothing else:
// the adapter never reaches into keel's store.

export interface ClaimedDelivery {
  delivery_id: string;
  run_id: string;
  destination: string;
  /** `result`: the run's answer; `approval`: a call waiting for a person (payload: the call). */
  kind: 'result' | 'approval';
  call_id: string | null;
  payload: Record<string, unknown>;
  attempt: number;
  claim_token: string;
}

export interface TurnRequest {
  agent: string;
  scope: string;
  payload: Record<string, unknown>;
  request_id: string;
  delivery: { destination: string };
}

export type AckOutcome =
  | { outcome: 'delivered' }
  | { outcome: 'retry'; error: string; retry_after_ms?: number }
  | { outcome: 'failed'; error: string };

/** keel answered with an error (status and its error code), or could not be reached. */
export class KeelCallError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly code: string | null,
  ) {
    super(message);
  }
}

export class KeelClient {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
    private readonly tenant: string,
  ) {}

  private async call(
    method: string,
    path: string,
    body: unknown,
    signal?: AbortSignal,
  ): Promise<Record<string, unknown>> {
    let response: Response;
    try {
      response = await fetch(
        `${this.baseUrl}/v1/tenants/${encodeURIComponent(this.tenant)}${path}`,
        {
          method,
          headers: {
            authorization: `Bearer ${this.token}`,
            // keel's cross-site guard: a state-changing request names its content type.
            ...(method !== 'GET' && { 'content-type': 'application/json' }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal,
        },
      );
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new KeelCallError(`keel unreachable: ${(error as Error).message}`, null, null);
    }
    const text = await response.text();
    let parsed: Record<string, unknown> = {};
    try {
      parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      // Not JSON (a proxy's page): reported with the status below.
    }
    if (!response.ok) {
      const error = parsed.error as { code?: string; message?: string } | undefined;
      throw new KeelCallError(
        `keel ${method} ${path}: ${response.status} ${error?.message ?? text.slice(0, 200)}`,
        response.status,
        error?.code ?? null,
      );
    }
    return parsed;
  }

  /** Posts a turn; a replayed request_id is answered with the first run, not a second. */
  async postTurn(turn: TurnRequest): Promise<{ run_id: string; deduplicated: boolean }> {
    const body = await this.call('POST', '/turns', turn);
    return { run_id: String(body.run_id), deduplicated: body.deduplicated === true };
  }

  /** Forgets the thread of a scope (`/new`); an unknown thread is fine. */
  async deleteThread(agent: string, scope: string): Promise<void> {
    try {
      await this.call(
        'DELETE',
        `/threads/${encodeURIComponent(agent)}/${encodeURIComponent(scope)}`,
        undefined,
      );
    } catch (error) {
      if (error instanceof KeelCallError && error.code === 'THREAD_NOT_FOUND') return;
      throw error;
    }
  }

  /** The run's approvals (call_id, tool, status, …). */
  async listRunApprovals(runId: string): Promise<{ call_id: string; status: string }[]> {
    const body = await this.call('GET', `/runs/${encodeURIComponent(runId)}/approvals`, undefined);
    return body.approvals as { call_id: string; status: string }[];
  }

  /** Records a decision; a call decided already is a KeelCallError with status 409. */
  async decideApproval(
    runId: string,
    callId: string,
    decision: 'approve' | 'deny',
    note: string,
  ): Promise<void> {
    await this.call(
      'POST',
      `/runs/${encodeURIComponent(runId)}/approvals/${encodeURIComponent(callId)}`,
      { decision, note },
    );
  }

  async claim(
    input: { destination_prefix: string; lease_ms: number; wait_ms: number; limit: number },
    signal?: AbortSignal,
  ): Promise<ClaimedDelivery[]> {
    const body = await this.call('POST', '/deliveries/claim', input, signal);
    return body.deliveries as ClaimedDelivery[];
  }

  async ack(delivery: ClaimedDelivery, ack: AckOutcome): Promise<void> {
    await this.call('POST', `/deliveries/${encodeURIComponent(delivery.delivery_id)}/ack`, {
      claim_token: delivery.claim_token,
      ...ack,
    });
  }
}
