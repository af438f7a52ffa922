// The agent the tests and benchmarks run unless they say otherwise: the fixture echo
// model with the limits of a default agent. One place, so a new AgentSpec field is
// added once.

import type { AgentSpec } from '../../src/types.ts';

export function agentSpec(overrides: Partial<AgentSpec> = {}): AgentSpec {
  return {
    model: 'fixture/echo',
    max_steps: 12,
    timeout_ms: 120_000,
    tool_timeout_ms: 30_000,
    temperature: 0.2,
    max_tokens: 4096,
    context_window: 20,
    on_uncertain_effect: 'tell_model',
    ...overrides,
  };
}
