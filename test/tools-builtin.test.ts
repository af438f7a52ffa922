import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { calcEvalTool } from '../src/tools/builtin/calc-eval.ts';
import { CalcError, evaluateExpression } from '../src/tools/builtin/calc-expression.ts';
import { createClockNowTool } from '../src/tools/builtin/clock-now.ts';

const clockNowTool = createClockNowTool();
import { builtinTools } from '../src/tools/builtin/index.ts';
import { createToolRegistry } from '../src/tools/registry.ts';
import type { AnyToolSpec, ToolContext } from '../src/tools/tool.ts';
import { ToolError } from '../src/tools/tool.ts';

function contextAt(iso: string): ToolContext {
  return {
    tenant: 't',
    agent: 'a',
    scope: 's',
    run_id: 'r',
    call_id: 'c',
    idempotency_key: 'r:c',
    deadline: Date.now() + 1000,
    signal: new AbortController().signal,
    ports: { now: () => new Date(iso) },
  };
}

async function runTool(
  tool: AnyToolSpec,
  input: unknown,
  context = contextAt('2026-01-15T12:00:00.000Z'),
) {
  const parsed = (tool.input as unknown as { parse(value: unknown): never }).parse(input);
  return tool.run(parsed, context);
}

describe('calc_eval expression language', () => {
  const cases: [string, number][] = [
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['2 ^ 3 ^ 2', 512],
    ['-2 ^ 2', -4],
    ['2 ^ -1', 0.5],
    ['2 ** 10', 1024],
    ['10 % 4', 2],
    ['5!', 120],
    ['3! !', 720],
    ['sqrt(16) + abs(-2)', 6],
    ['max(1, 7, 3) - min(4, 2)', 5],
    ['round(pi, 2)', 3.14],
    ['log(1000)', 3],
    ['log(8, 2)', 3],
    ['1_000 * 2', 2000],
    ['1.5e3 / .5', 3000],
    ['avg(1, 2, 3, 4)', 2.5],
    ['--3', 3],
  ];
  for (const [expression, expected] of cases) {
    it(`${expression} = ${expected}`, () => {
      assert.ok(Math.abs(evaluateExpression(expression) - expected) < 1e-9);
    });
  }

  const rejected: [string, RegExp][] = [
    ['1 / 0', /division by zero/],
    ['1 +', /unexpected end/],
    ['(1 + 2', /expected "\)"/],
    ['process.exit(1)', /unexpected character "\."|unknown name/],
    ['constructor', /unknown name/],
    ['__proto__', /unknown name/],
    ['tostring(1)', /unknown name/],
    ['sqrt(1, 2)', /takes 1 arguments/],
    ['171!', /factorial too large/],
    ['2.5!', /non-negative integer/],
    ['10 ^ 400', /infinite/],
    ['sqrt(-1)', /not a number/],
    ['1 2', /unexpected input/],
    ['x = 1', /unknown name|unexpected character/],
    ['('.repeat(100) + '1' + ')'.repeat(100), /nested too deeply/],
    ['1+'.repeat(600) + '1', /longer than 1000/],
  ];
  for (const [expression, message] of rejected) {
    it(`rejects ${expression.slice(0, 30)}`, () => {
      assert.throws(
        () => evaluateExpression(expression),
        (error: unknown) => {
          assert.ok(error instanceof CalcError);
          assert.match(error.message, message);
          return true;
        },
      );
    });
  }

  it('agrees with JavaScript arithmetic on random integer expressions', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1000, max: 1000 }),
        fc.integer({ min: -1000, max: 1000 }),
        fc.integer({ min: 1, max: 50 }),
        (a, b, c) => {
          assert.equal(evaluateExpression(`${a} + ${b} * ${c}`), a + b * c);
          assert.equal(evaluateExpression(`(${a} - ${b}) / ${c}`), (a - b) / c);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('calc_eval tool', () => {
  it('returns the value and reports bad input as a ToolError with CALC_INVALID', async () => {
    assert.deepEqual(await runTool(calcEvalTool, { expression: '6 * 7' }), {
      expression: '6 * 7',
      value: 42,
    });
    await assert.rejects(runTool(calcEvalTool, { expression: '6 *' }), (error: unknown) => {
      assert.ok(error instanceof ToolError);
      assert.equal(error.code, 'CALC_INVALID');
      return true;
    });
  });
});

describe('clock_now tool', () => {
  it('reads UTC by default', async () => {
    const result = (await runTool(clockNowTool, {})) as Record<string, unknown>;
    assert.equal(result.utc, '2026-01-15T12:00:00.000Z');
    assert.equal(result.epoch_ms, Date.parse('2026-01-15T12:00:00.000Z'));
    assert.equal(result.local, '2026-01-15T12:00:00.000+00:00');
    assert.equal(result.weekday, 'Thursday');
  });

  it('follows daylight saving time in an IANA zone', async () => {
    const winter = (await runTool(clockNowTool, { timezone: 'Europe/Berlin' })) as Record<
      string,
      unknown
    >;
    assert.equal(winter.local, '2026-01-15T13:00:00.000+01:00');
    const summer = (await runTool(
      clockNowTool,
      { timezone: 'Europe/Berlin' },
      contextAt('2026-07-15T12:00:00.000Z'),
    )) as Record<string, unknown>;
    assert.equal(summer.local, '2026-07-15T14:00:00.000+02:00');
    const kolkata = (await runTool(clockNowTool, { timezone: 'Asia/Kolkata' })) as Record<
      string,
      unknown
    >;
    assert.equal(kolkata.utc_offset, '+05:30');
  });

  it('rejects an unknown zone with INVALID_TIMEZONE', async () => {
    await assert.rejects(runTool(clockNowTool, { timezone: 'Mars/Olympus' }), (error: unknown) => {
      assert.ok(error instanceof ToolError);
      assert.equal(error.code, 'INVALID_TIMEZONE');
      return true;
    });
  });
});

describe('tool registry', () => {
  const registry = createToolRegistry(builtinTools());

  it('shows every tool when allowed_families is omitted and none for []', () => {
    const names = registry
      .visibleTo({})
      .map((tool) => tool.name)
      .sort();
    assert.deepEqual(
      names,
      builtinTools()
        .map((tool) => tool.name)
        .sort(),
    );
    // agentd's names are kept, so agents move over unchanged.
    for (const name of [
      'calc_eval',
      'clock_now',
      'artifact_read',
      'memory_search',
      'schedule_put',
      'web_fetch',
    ]) {
      assert.ok(names.includes(name), `${name} is a built-in`);
    }
    assert.deepEqual(registry.visibleTo({ allowed_families: [] }), []);
  });

  it('narrows by family, then by tool name', () => {
    assert.deepEqual(
      registry.visibleTo({ allowed_families: ['clock'] }).map((tool) => tool.name),
      ['clock_now'],
    );
    assert.deepEqual(
      registry
        .visibleTo({ allowed_families: ['clock', 'calc'], allowed_tools: ['calc_eval'] })
        .map((tool) => tool.name),
      ['calc_eval'],
    );
    assert.deepEqual(
      registry.visibleTo({ allowed_families: ['clock'], allowed_tools: ['calc_eval'] }),
      [],
    );
  });

  it('describes a tool with the JSON Schema of its zod input', () => {
    const description = registry.describe(calcEvalTool);
    assert.equal(description.effect, 'read_only');
    assert.equal(description.family, 'calc');
    assert.deepEqual(description.input_schema.required, ['expression']);
    assert.equal(description.input_schema.additionalProperties, false);
    assert.equal(description.input_schema.$schema, undefined);
  });

  it('refuses two tools with one name', () => {
    assert.throws(() => createToolRegistry([calcEvalTool, calcEvalTool]), /registered twice/);
  });
});
