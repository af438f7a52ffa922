// Who may use the Telegram bot is a required setting: without TELEGRAM_ALLOWED_USERS (or
// an explicit TELEGRAM_ALLOW_ANYONE=1) the adapter refuses to start, naming the variable,
// and a list with anything but numeric user ids is an error at start — before, anyone
// who found the bot ran turns on the owner's key, memory and tools.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { ConfigError, loadAdapterConfig } from '../adapters/telegram/src/config.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const BASE = { KEEL_TOKEN: 'keel_x', KEEL_TENANT: 't', TELEGRAM_BOT_TOKEN: '1:x' };

function load(extra: Record<string, string>) {
  return loadAdapterConfig(['--agent', 'a'], { ...BASE, ...extra });
}

function refused(extra: Record<string, string>, pattern: RegExp): void {
  assert.throws(
    () => load(extra),
    (error: unknown) => error instanceof ConfigError && pattern.test(error.message),
  );
}

describe('keel-telegram: TELEGRAM_ALLOWED_USERS', () => {
  it('a list of user ids is read into a set; TELEGRAM_ALLOW_ANYONE=1 is anyone', () => {
    const config = load({ TELEGRAM_ALLOWED_USERS: '42, 7,9007199254740991' });
    assert.deepEqual(config.allowedUsers, new Set([42, 7, 9007199254740991]));
    assert.equal(load({ TELEGRAM_ALLOW_ANYONE: '1' }).allowedUsers, 'anyone');
  });

  it('unset (or blank) refuses to start, naming the variable and the way out', () => {
    refused({}, /^TELEGRAM_ALLOWED_USERS is not set: .*TELEGRAM_ALLOW_ANYONE=1/);
    refused({ TELEGRAM_ALLOWED_USERS: ' ' }, /^TELEGRAM_ALLOWED_USERS is not set/);
  });

  it('anything but positive integer ids is an error naming the entry', () => {
    for (const [list, entry] of [
      ['42,abc', '"abc"'],
      ['42,,7', '""'],
      ['-1001234', '"-1001234"'],
      ['@ada', '"@ada"'],
      ['1.5', '"1.5"'],
      ['0', '"0"'],
      ['99999999999999999', '"99999999999999999"'],
    ] as const) {
      refused(
        { TELEGRAM_ALLOWED_USERS: list },
        new RegExp(
          `^TELEGRAM_ALLOWED_USERS: ${entry.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not a Telegram user id`,
        ),
      );
    }
  });

  it('TELEGRAM_ALLOW_ANYONE other than 1, or with a list, is an error', () => {
    refused({ TELEGRAM_ALLOW_ANYONE: 'yes' }, /^TELEGRAM_ALLOW_ANYONE must be 1/);
    refused({ TELEGRAM_ALLOW_ANYONE: '1', TELEGRAM_ALLOWED_USERS: '42' }, /not both/);
  });

  it('keel-telegram without it exits 2 with the error on stderr, before any network call', () => {
    const env: NodeJS.ProcessEnv = {};
    for (const [key, value] of Object.entries(process.env)) {
      if (!key.startsWith('KEEL_') && !key.startsWith('TELEGRAM_')) env[key] = value;
    }
    const result = spawnSync(process.execPath, ['bin/keel-telegram.js', '--agent', 'a'], {
      cwd: ROOT,
      // An API root nobody answers: old code got this far and failed differently.
      env: { ...env, ...BASE, TELEGRAM_API_ROOT: 'http://127.0.0.1:9' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(result.status, 2, result.stderr);
    assert.match(result.stderr, /^keel-telegram: TELEGRAM_ALLOWED_USERS is not set/m);
  });
});
