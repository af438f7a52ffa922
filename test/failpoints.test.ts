// Fault points: parsing, n-th hit, throw, sleep, kill — and inert unless enabled. That a
// production `keel serve` can never enable them is test-switches.test.ts.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { createFailpoints, inertFailpoints, parseFailpoints } from '../src/failpoints.ts';
import { isKeelError } from '../src/errors.ts';
import { TS_IMPORT } from './helpers/ts-import.ts';

const ROOT = new URL('..', import.meta.url).pathname;

/** Hits `model.after_response` in a child process with fault points built from its args. */
function hitInChild(enabled: boolean): {
  status: number | null;
  signal: string | null;
  out: string;
} {
  const script = [
    "import { createFailpoints } from './src/failpoints.ts';",
    `createFailpoints({ enabled: ${enabled}, spec: 'model.after_response=kill' }).hit('model.after_response');`,
    "console.log('alive');",
  ].join('\n');
  const result = spawnSync(process.execPath, [...TS_IMPORT, '--input-type=module', '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return { status: result.status, signal: result.signal, out: result.stdout };
}

describe('failpoints', () => {
  it('parses name=action pairs with an optional n* prefix', () => {
    const rules = parseFailpoints(' a=kill ; b=throw(boom);c=3*sleep(10);d=throw ');
    assert.deepEqual(rules.get('a'), { action: { kind: 'kill' }, onlyHit: null });
    assert.deepEqual(rules.get('b'), { action: { kind: 'throw', message: 'boom' }, onlyHit: null });
    assert.deepEqual(rules.get('c'), { action: { kind: 'sleep', ms: 10 }, onlyHit: 3 });
    assert.deepEqual(rules.get('d'), {
      action: { kind: 'throw', message: 'failpoint' },
      onlyHit: null,
    });
    for (const bad of ['a=explode', 'noequals', '=kill', 'a=sleep(x)']) {
      assert.throws(
        () => parseFailpoints(bad),
        (error) => isKeelError(error, 'CONFIG_INVALID'),
      );
    }
  });

  it('throw fires on every hit; n* only on the n-th', () => {
    const points = createFailpoints({ enabled: true, spec: 'x=throw(boom);y=2*throw(second)' });
    assert.throws(() => points.hit('x'), /failpoint x: boom/);
    assert.throws(() => points.hit('x'), /boom/);
    points.hit('y');
    assert.throws(() => points.hit('y'), /second/);
    points.hit('y');
    points.hit('unnamed');
  });

  it('sleep blocks for its time', () => {
    const points = createFailpoints({ enabled: true, spec: 'z=sleep(40)' });
    const started = Date.now();
    points.hit('z');
    assert.ok(Date.now() - started >= 35);
  });

  it('is inert unless enabled: nothing happens, even for throw', () => {
    const points = createFailpoints({ enabled: false, spec: 'x=throw(boom)' });
    assert.equal(points, inertFailpoints);
    points.hit('x');
    assert.equal(createFailpoints({ enabled: true, spec: '' }), inertFailpoints);
  });

  it('a kill point does nothing unless enabled; enabled, it kills the process', () => {
    const inert = hitInChild(false);
    assert.equal(inert.status, 0);
    assert.equal(inert.out.trim(), 'alive');
    const armed = hitInChild(true);
    assert.equal(armed.signal, 'SIGKILL');
    assert.equal(armed.out, '');
  });
});
