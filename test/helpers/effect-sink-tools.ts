// Test-only tools that write to an "effect sink" process on loopback (test/helpers/
// effect-sink.ts), so crash tests can count executions outside keel's own database.
// Injected only by the test entry (keel-test-serve.ts, from KEEL_TEST_EFFECT_SINK_URL) as
// startKeel's extraTools; a production keel has no way to register them.
//
//   sink_write — effectful: the runtime must never repeat it blindly after a crash;
//   sink_put   — idempotent: repeating it with the same key is safe (the sink counts).

import { z } from 'zod';
import type { JsonValue } from '../../src/types.ts';
import type { AnyToolSpec, ToolContext } from '../../src/tools/tool.ts';
import { defineTool, ToolError } from '../../src/tools/tool.ts';

const sinkInput = z.strictObject({
  value: z.string().max(1000).optional().describe('what to write'),
  hold_ms: z
    .number()
    .int()
    .min(0)
    .max(60_000)
    .optional()
    .describe('how long the sink holds the request before answering'),
});
type SinkInput = z.infer<typeof sinkInput>;

async function post(
  url: string,
  tool: string,
  input: SinkInput,
  context: ToolContext,
): Promise<JsonValue> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      tool,
      idempotency_key: context.idempotency_key,
      run_id: context.run_id,
      call_id: context.call_id,
      scope: `${context.tenant}/${context.agent}/${context.scope}`,
      args: input,
      pid: process.pid,
    }),
    signal: context.signal,
  });
  if (!response.ok) throw new ToolError('SINK_ERROR', `the sink answered ${response.status}`);
  return (await response.json()) as JsonValue;
}

export function effectSinkTools(sinkUrl: string): AnyToolSpec[] {
  const url = new URL('/effects', sinkUrl).toString();
  return [
    defineTool({
      name: 'sink_write',
      family: 'test',
      effect: 'effectful',
      description: 'Test only: record one effect in the effect sink (not idempotent).',
      input: sinkInput,
      run: (input, context) => post(url, 'sink_write', input, context),
    }),
    defineTool({
      name: 'sink_put',
      family: 'test',
      effect: 'idempotent',
      description: 'Test only: put a value in the effect sink under the call idempotency key.',
      input: sinkInput,
      run: (input, context) => post(url, 'sink_put', input, context),
    }),
  ];
}
