// Summaries and examples of the main routes in /openapi.json, keyed `METHOD url`.
// Examples are checked against the route's schemas by `redocly lint` (test/openapi-*).

const T = '/v1/tenants/:tenant';

export const SUMMARIES: Record<string, string> = {
  'POST /v1/tenants': 'Create a tenant',
  [`POST ${T}/tokens`]: 'Mint a tenant token',
  [`PUT ${T}/agents/:agent`]: 'Create or replace an agent',
  [`POST ${T}/turns`]: 'Submit a turn (queues a run)',
  [`GET ${T}/runs`]: 'List runs',
  [`GET ${T}/runs/:id`]: 'Read a run',
  [`GET ${T}/runs/:id/wait`]: 'Wait for a run to end',
  [`GET ${T}/runs/:id/events`]: 'Stream run events (SSE)',
  [`POST ${T}/runs/:id/cancel`]: 'Cancel a run',
  [`POST ${T}/deliveries/claim`]: 'Claim pending deliveries',
  [`POST ${T}/deliveries/:id/ack`]: 'Acknowledge a claimed delivery',
  [`GET ${T}/threads/:agent/:scope`]: 'Read a thread',
  [`PUT ${T}/schedules/:name`]: 'Create or replace a schedule',
};

export const REQUEST_EXAMPLES: Record<string, unknown> = {
  'POST /v1/tenants': { name: 'demo', metadata: { owner: 'ops' } },
  [`POST ${T}/tokens`]: { name: 'laptop' },
  [`PUT ${T}/agents/:agent`]: { model: 'fixture/echo', persona: 'You are terse.', max_steps: 8 },
  [`POST ${T}/turns`]: {
    agent: 'helper',
    scope: 'chat-42',
    payload: { text: 'What is 2+2?' },
    request_id: 'msg-1001',
    delivery: { destination: 'telegram:42' },
  },
  [`POST ${T}/deliveries/claim`]: { limit: 10 },
  [`POST ${T}/deliveries/:id/ack`]: {
    claim_token: '6f1c2a9e-2b5d-4c1e-9f3a-0d8e7b6a5c4d',
    outcome: 'delivered',
  },
};

export const RESPONSE_EXAMPLES: Record<string, Record<string, unknown>> = {
  [`POST ${T}/turns`]: {
    202: { run_id: '0193a7c2-5f7e-7d3b-9c1a-2b4d6e8f0a1c', status: 'queued', deduplicated: false },
  },
};
