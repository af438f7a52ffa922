// The service definitions under deploy/ (docs/deploy.md): the systemd unit passes
// `systemd-analyze verify` with no complaint (a copy with a typo must fail it, so the
// check can fail), and the launchd plist parses (python3's plistlib, the format's
// reference reader here; macOS's plutil is not on Linux) with the keys that keep keel
// running. Both run `keel serve`, stop it with SIGTERM and wait longer than keel's own
// 30 s stop deadline.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';

const ROOT = new URL('..', import.meta.url).pathname;
const SYSTEMD_ANALYZE = '/usr/bin/systemd-analyze';
const dir = mkdtempSync(join(tmpdir(), 'keel-deploy-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** `systemd-analyze verify` of `text` saved as keel.service: exit code and complaints. */
function verify(text: string): { code: number | null; output: string } {
  const path = join(dir, 'keel.service');
  writeFileSync(path, text);
  const result = spawnSync(SYSTEMD_ANALYZE, ['verify', path], { cwd: dir, encoding: 'utf8' });
  return { code: result.status, output: `${result.stdout}${result.stderr}`.trim() };
}

/** Key → values of one section of a unit file. */
function section(text: string, name: string): Map<string, string[]> {
  const values = new Map<string, string[]>();
  const body = text.split(/^\[/m).find((part) => part.startsWith(`${name}]`)) ?? '';
  for (const line of body.split('\n').slice(1)) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(line.trim());
    if (match)
      values.set(match[1] as string, [
        ...(values.get(match[1] as string) ?? []),
        match[2] as string,
      ]);
  }
  return values;
}

describe('deploy/keel.service', () => {
  const unit = readFileSync(join(ROOT, 'deploy/keel.service'), 'utf8');

  it('passes systemd-analyze verify without a warning', (context) => {
    if (!existsSync(SYSTEMD_ANALYZE)) {
      context.skip(`${SYSTEMD_ANALYZE} is absent on this machine`);
      return;
    }
    assert.deepEqual(verify(unit), { code: 0, output: '' });
    // The check can fail: a misspelt key and a missing binary are both reported.
    const typo = verify(unit.replace('\nKillMode=', '\nKilMode='));
    assert.match(typo.output, /Unknown key 'KilMode'/);
    const missing = verify(
      unit.replace('ExecStart=/usr/bin/env', 'ExecStart=/usr/bin/keel-absent'),
    );
    assert.notEqual(missing.code, 0);
  });

  it('runs keel serve with its files under KEEL_HOME, hardened, stopped gracefully', () => {
    const service = section(unit, 'Service');
    assert.deepEqual(service.get('ExecStart'), ['/usr/bin/env keel serve']);
    assert.ok(service.get('Environment')?.includes('KEEL_HOME=/var/lib/keel'));
    assert.deepEqual(service.get('StateDirectory'), ['keel']);
    assert.deepEqual(service.get('ReadWritePaths'), ['/var/lib/keel']);
    assert.deepEqual(service.get('ProtectSystem'), ['strict']);
    assert.deepEqual(service.get('NoNewPrivileges'), ['yes']);
    assert.deepEqual(service.get('Restart'), ['on-failure']);
    assert.deepEqual(service.get('KillSignal'), ['SIGTERM']);
    assert.deepEqual(service.get('KillMode'), ['mixed'], 'SIGTERM to keel alone');
    assert.ok(Number(service.get('TimeoutStopSec')?.[0]) > 30, 'longer than keel stop deadline');
    assert.equal(service.get('MemoryDenyWriteExecute'), undefined, "V8's JIT needs W+X pages");
  });
});

describe('deploy/dev.keel.plist', () => {
  it('is a well-formed property list with the keys that keep keel running', () => {
    const parsed = spawnSync(
      'python3',
      [
        '-c',
        'import json, plistlib, sys; print(json.dumps(plistlib.loads(sys.stdin.buffer.read())))',
      ],
      { input: readFileSync(join(ROOT, 'deploy/dev.keel.plist')), encoding: 'utf8' },
    );
    assert.equal(parsed.status, 0, parsed.stderr);
    const plist = JSON.parse(parsed.stdout) as Record<string, unknown>;
    assert.equal(plist.Label, 'dev.keel');
    assert.deepEqual(plist.ProgramArguments, ['/usr/bin/env', 'keel', 'serve']);
    assert.equal(plist.RunAtLoad, true);
    assert.deepEqual(plist.KeepAlive, { SuccessfulExit: false });
    assert.ok(Number(plist.ExitTimeOut) > 30, 'longer than keel stop deadline');
    for (const key of ['StandardOutPath', 'StandardErrorPath']) {
      assert.match(String(plist[key]), /^\/Users\/YOU\/Library\/Logs\/keel\.log$/, key);
    }
    const path = (plist.EnvironmentVariables as Record<string, string>).PATH ?? '';
    assert.ok(path.split(':').includes('/usr/local/bin'), 'npm -g puts keel in /usr/local/bin');
  });
});
