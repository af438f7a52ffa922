// Where keel finds keel.toml and keeps its data when started from any directory
// (src/config-locations.ts, docs/configuration.md "Where keel keeps its files"): every
// rung of both orders, relative paths of keel.toml taken from keel.toml's directory, an
// earlier keel's ./.keel kept rather than replaced by an empty database, and the line
// `keel serve` logs (a PostgreSQL password never in it). Every case runs with HOME and
// the XDG variables pointing into temp dirs.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { describeEarlierPaths, describeFiles, redactStoreUrl } from '../src/config-locations.ts';
import { isKeelError } from '../src/errors.ts';
import { openPostgresStore } from '../src/store/postgres/index.ts';

const dirs: string[] = [];
function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'keel-locations-'));
  dirs.push(dir);
  return dir;
}

function write(path: string, text: string): string {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  return path;
}

/** A working directory, a home, and the XDG dirs of that home (unset: their defaults). */
function machine() {
  const cwd = temp();
  const home = temp();
  return { cwd, home, env: { HOME: home } as NodeJS.ProcessEnv };
}

describe('config file and data dir locations', () => {
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('nothing set: no config file, data in ~/.local/share/keel, not in the working directory', () => {
    const { cwd, home, env } = machine();
    const config = loadConfig({}, env, cwd);
    assert.equal(config.files.config, null);
    assert.equal(config.data_dir, join(home, '.local/share/keel'));
    assert.equal(config.files.data_dir_from, 'xdg');
    assert.equal(config.store.url, `sqlite:${join(home, '.local/share/keel/keel.db')}`);
  });

  it('XDG_CONFIG_HOME / XDG_DATA_HOME move the defaults; relative XDG values are ignored', () => {
    const { cwd, home, env } = machine();
    const xdgConfig = temp();
    const xdgData = temp();
    const file = write(join(xdgConfig, 'keel/keel.toml'), 'listen = "127.0.0.1:7001"\n');
    const config = loadConfig(
      {},
      { ...env, XDG_CONFIG_HOME: xdgConfig, XDG_DATA_HOME: xdgData },
      cwd,
    );
    assert.equal(config.files.config, file);
    assert.equal(config.listen.port, 7001);
    assert.equal(config.data_dir, join(xdgData, 'keel'));
    // ~/.config/keel/keel.toml is the default of XDG_CONFIG_HOME
    const homeFile = write(join(home, '.config/keel/keel.toml'), 'listen = "127.0.0.1:7002"\n');
    const relative = loadConfig({}, { ...env, XDG_CONFIG_HOME: 'cfg', XDG_DATA_HOME: 'data' }, cwd);
    assert.equal(relative.files.config, homeFile);
    assert.equal(relative.data_dir, join(home, '.local/share/keel'));
  });

  it('./keel.toml wins over the XDG config file (a checkout keeps working)', () => {
    const { cwd, home, env } = machine();
    write(join(home, '.config/keel/keel.toml'), 'listen = "127.0.0.1:7002"\n');
    const local = write(join(cwd, 'keel.toml'), 'listen = "127.0.0.1:7003"\n');
    const config = loadConfig({}, env, cwd);
    assert.equal(config.files.config, local);
    assert.equal(config.listen.port, 7003);
  });

  it('KEEL_HOME holds keel.toml and data/; with it set, ./keel.toml and ~ are not looked at', () => {
    const { cwd, home, env } = machine();
    const keelHome = temp();
    write(join(cwd, 'keel.toml'), 'listen = "127.0.0.1:7003"\n');
    write(join(home, '.config/keel/keel.toml'), 'listen = "127.0.0.1:7002"\n');
    write(join(cwd, '.keel/keel.db'), '');
    const bare = loadConfig({}, { ...env, KEEL_HOME: keelHome }, cwd);
    assert.equal(bare.files.config, null);
    assert.equal(bare.listen.port, 8080);
    assert.equal(bare.data_dir, join(keelHome, 'data'));
    assert.equal(bare.files.data_dir_from, 'keel_home');
    const file = write(join(keelHome, 'keel.toml'), 'listen = "127.0.0.1:7004"\n');
    const withFile = loadConfig({}, { ...env, KEEL_HOME: keelHome }, cwd);
    assert.equal(withFile.files.config, file);
    assert.equal(withFile.listen.port, 7004);
  });

  it('--config > KEEL_CONFIG > KEEL_HOME; a named file must exist', () => {
    const { cwd, env } = machine();
    const keelHome = temp();
    write(join(keelHome, 'keel.toml'), 'listen = "127.0.0.1:7004"\n');
    write(join(cwd, 'named.toml'), 'listen = "127.0.0.1:7005"\n');
    write(join(cwd, 'flagged.toml'), 'listen = "127.0.0.1:7006"\n');
    const withHome = { ...env, KEEL_HOME: keelHome };
    assert.equal(loadConfig({}, { ...withHome, KEEL_CONFIG: 'named.toml' }, cwd).listen.port, 7005);
    assert.equal(
      loadConfig({ config: 'flagged.toml' }, { ...withHome, KEEL_CONFIG: 'named.toml' }, cwd).listen
        .port,
      7006,
    );
    assert.throws(
      () => loadConfig({}, { ...env, KEEL_CONFIG: 'absent.toml' }, cwd),
      (error: unknown) =>
        isKeelError(error, 'CONFIG_INVALID') && /absent\.toml/.test(error.message),
    );
  });

  it("data_dir and a sqlite store.url in keel.toml are relative to keel.toml's directory", () => {
    const { cwd, env } = machine();
    const elsewhere = temp();
    write(join(elsewhere, 'keel.toml'), 'data_dir = "state"\n');
    const config = loadConfig({ config: join(elsewhere, 'keel.toml') }, env, cwd);
    assert.equal(config.data_dir, join(elsewhere, 'state'));
    assert.equal(config.files.data_dir_from, 'config');
    assert.equal(config.store.url, `sqlite:${join(elsewhere, 'state/keel.db')}`);
    write(join(elsewhere, 'store.toml'), '[store]\nurl = "sqlite:db/k.db"\n');
    const store = loadConfig({ config: join(elsewhere, 'store.toml') }, env, cwd);
    assert.equal(store.store.url, `sqlite:${join(elsewhere, 'db/k.db')}`);
    // flags and env are relative to the working directory, and win over the file
    const flagged = loadConfig(
      { config: join(elsewhere, 'keel.toml'), data_dir: 'here' },
      { ...env, KEEL_DATA_DIR: 'there' },
      cwd,
    );
    assert.equal(flagged.data_dir, join(cwd, 'here'));
    assert.equal(flagged.files.data_dir_from, 'flag');
    const fromEnv = loadConfig(
      { config: join(elsewhere, 'keel.toml') },
      { ...env, KEEL_DATA_DIR: 'there' },
      cwd,
    );
    assert.equal(fromEnv.data_dir, join(cwd, 'there'));
    assert.equal(fromEnv.files.data_dir_from, 'env');
    assert.equal(
      loadConfig({ store_url: 'sqlite:x.db', config: join(elsewhere, 'store.toml') }, env, cwd)
        .store.url,
      `sqlite:${join(cwd, 'x.db')}`,
    );
  });

  it("an earlier keel's ./.keel with a keel.db is kept (said so), an empty ./.keel is not", () => {
    const { cwd, home, env } = machine();
    mkdirSync(join(cwd, '.keel'));
    assert.equal(loadConfig({}, env, cwd).data_dir, join(home, '.local/share/keel'));
    write(join(cwd, '.keel/keel.db'), 'an earlier database');
    const config = loadConfig({}, env, cwd);
    assert.equal(config.data_dir, join(cwd, '.keel'));
    assert.equal(config.files.data_dir_from, 'legacy');
    assert.match(describeFiles(config).message, /\.\/\.keel holds a keel\.db/);
    // any explicit setting wins over it
    assert.equal(loadConfig({}, { ...env, KEEL_HOME: home }, cwd).data_dir, join(home, 'data'));
    assert.equal(loadConfig({}, { ...env, KEEL_DATA_DIR: '/d' }, cwd).data_dir, '/d');
  });

  it('the start line names the file, the data dir and its reason, the store without password', () => {
    const { cwd, home, env } = machine();
    const none = describeFiles(loadConfig({}, env, cwd));
    assert.equal(
      none.message,
      `config none; data dir ${join(home, '.local/share/keel')} (default: XDG_DATA_HOME/keel); store sqlite:${join(home, '.local/share/keel/keel.db')}`,
    );
    const pg = loadConfig({ store_url: 'postgres://keel:s3cret@db.example:5432/keel' }, env, cwd);
    const line = describeFiles(pg);
    assert.doesNotMatch(JSON.stringify(line), /s3cret/);
    assert.equal(line.fields.store, 'postgres://db.example:5432/keel');
    assert.equal(redactStoreUrl('postgresql://u@h/db'), 'postgresql://h:5432/db');
    assert.equal(redactStoreUrl('sqlite:/x/keel.db'), 'sqlite:/x/keel.db');
  });

  it('the start line never carries a password: not from ?password=, not from an unencoded "/"', () => {
    const { cwd, env } = machine();
    const line = (url: string) => describeFiles(loadConfig({ store_url: url }, env, cwd));
    // pg reads a password from the query too (?password=, ?sslpassword=)
    const query = line('postgres://keel@db/keel?password=s3cret&sslpassword=s3cret2&schema=t1');
    assert.doesNotMatch(JSON.stringify(query), /s3cret/);
    assert.equal(query.fields.store, 'postgres://db:5432/keel?schema=t1');
    // a "/" in the password: new URL refuses it, or reads the password as host:port/path
    for (const url of ['postgres://u:ab/s3cret@host/db', 'postgres://u:12/s3cret@host/db']) {
      const slashed = line(url);
      assert.doesNotMatch(JSON.stringify(slashed), /s3cret/);
      assert.equal(slashed.fields.store, 'postgres://<unparseable URL>');
    }
  });

  it('the PostgreSQL store refuses a URL it cannot print safely, before connecting', async () => {
    await assert.rejects(
      openPostgresStore({ url: 'postgres://u:12/cd@127.0.0.1/keel' }),
      (error: unknown) =>
        isKeelError(error, 'CONFIG_INVALID') &&
        /^store\.url: /.test(error.message) &&
        !error.message.includes('12/cd'),
    );
  });

  it('an upgrade keeps a relative data_dir / sqlite store.url where the earlier keel read it (cwd) while only there is a database', () => {
    // Before: --config /etc/keel/keel.toml, data_dir = ".keel", started from /srv/keel,
    // used /srv/keel/.keel. Now relative to keel.toml: /etc/keel/.keel, with no database.
    const { cwd, env } = machine();
    const etc = temp();
    const file = write(join(etc, 'keel.toml'), 'data_dir = ".keel"\n');
    write(join(cwd, '.keel/keel.db'), 'the earlier database');
    const kept = loadConfig({ config: file }, env, cwd);
    assert.equal(kept.data_dir, join(cwd, '.keel'));
    assert.equal(kept.store.url, `sqlite:${join(cwd, '.keel/keel.db')}`);
    assert.deepEqual(kept.files.earlier_paths, [
      { setting: 'data_dir', path: join(cwd, '.keel'), instead_of: join(etc, '.keel') },
    ]);
    const [warning, ...more] = describeEarlierPaths(kept.files);
    assert.equal(more.length, 0);
    assert.ok(warning?.message.includes(join(cwd, '.keel')));
    assert.ok(warning?.message.includes(join(etc, '.keel')));
    // a database beside keel.toml wins: the new rule, no warning
    write(join(etc, '.keel/keel.db'), 'a database at the new place');
    const moved = loadConfig({ config: file }, env, cwd);
    assert.equal(moved.data_dir, join(etc, '.keel'));
    assert.deepEqual(moved.files.earlier_paths, []);
    // a relative sqlite store.url likewise
    const storeFile = write(join(etc, 'store.toml'), '[store]\nurl = "sqlite:db/k.db"\n');
    write(join(cwd, 'db/k.db'), 'the earlier database');
    const store = loadConfig({ config: storeFile }, env, cwd);
    assert.equal(store.store.url, `sqlite:${join(cwd, 'db/k.db')}`);
    assert.deepEqual(store.files.earlier_paths, [
      { setting: 'store.url', path: join(cwd, 'db/k.db'), instead_of: join(etc, 'db/k.db') },
    ]);
    write(join(etc, 'db/k.db'), 'a database at the new place');
    assert.equal(
      loadConfig({ config: storeFile }, env, cwd).store.url,
      `sqlite:${join(etc, 'db/k.db')}`,
    );
    // a store URL from the environment is not keel.toml's: nothing kept, nothing warned
    const fromEnv = loadConfig(
      { config: storeFile },
      { ...env, KEEL_STORE_URL: 'sqlite:x.db' },
      cwd,
    );
    assert.deepEqual(fromEnv.files.earlier_paths, []);
  });
});
