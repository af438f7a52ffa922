// Where keel finds its config file and keeps its data when no path is given, so an
// installed `keel serve` works from any directory (docs/configuration.md, "Where keel
// keeps its files"). Pure: src/config.ts passes the environment, the working directory
// and a file-exists check in, and stays the only reader of process.env.

import { userInfo } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { KeelError } from './errors.ts';
import { safePostgresUrl } from './postgres-address.ts';

/** What chose the data dir; `keel serve` prints it beside the path. */
export type DataDirSource = 'flag' | 'env' | 'config' | 'keel_home' | 'legacy' | 'xdg';

export interface FileLocations {
  /** The keel.toml read (absolute), or null: none found, defaults only. */
  config: string | null;
  data_dir_from: DataDirSource;
  /** Relative paths of keel.toml kept where an earlier keel read them (warned at start). */
  earlier_paths: EarlierPath[];
}

/**
 * A relative path of keel.toml read from the working directory, as keels before
 * "relative to keel.toml" did, because only there is a database.
 */
export interface EarlierPath {
  setting: 'data_dir' | 'store.url';
  /** Used: relative to the working directory; the database is there. */
  path: string;
  /** Relative to keel.toml's directory: no database there. */
  instead_of: string;
}

type Exists = (path: string) => boolean;

/** $HOME, else the account's home from the user database (never the process's cwd). */
function homeOf(env: NodeJS.ProcessEnv): string {
  if (env.HOME && isAbsolute(env.HOME)) return env.HOME;
  try {
    return userInfo().homedir;
  } catch {
    throw new KeelError(
      'CONFIG_INVALID',
      'data_dir: no home directory (HOME unset, no user entry); set KEEL_HOME, KEEL_DATA_DIR or --data-dir',
    );
  }
}

/** An XDG base directory: the variable when absolute (the spec ignores relative ones). */
function xdgBase(env: NodeJS.ProcessEnv, variable: string, underHome: string): string {
  const value = env[variable];
  return value && isAbsolute(value) ? value : join(homeOf(env), underHome);
}

/**
 * --config > $KEEL_CONFIG > (with $KEEL_HOME: $KEEL_HOME/keel.toml if it exists, nothing
 * else) > ./keel.toml if it exists > $XDG_CONFIG_HOME/keel/keel.toml if it exists > none.
 * A named file (flag, KEEL_CONFIG) must exist; the others are looked for.
 */
export function findConfigFile(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  cwd: string,
  exists: Exists,
): string | null {
  const named = flag ?? env.KEEL_CONFIG;
  if (named) return resolve(cwd, named);
  const candidates = env.KEEL_HOME
    ? [join(resolve(cwd, env.KEEL_HOME), 'keel.toml')]
    : [
        join(cwd, 'keel.toml'),
        ...(env.XDG_CONFIG_HOME || env.HOME
          ? [join(xdgBase(env, 'XDG_CONFIG_HOME', '.config'), 'keel', 'keel.toml')]
          : []),
      ];
  return candidates.find((path) => exists(path)) ?? null;
}

/**
 * A relative path of keel.toml: relative to keel.toml's directory, unless the database
 * (`database(path)`) is missing there and present relative to the working directory —
 * an earlier keel read it so, and an upgraded one started the same way must not open an
 * empty database beside keel.toml and leave the data behind.
 */
export function resolveFromConfigFile(
  value: string,
  setting: EarlierPath['setting'],
  configFile: string | null,
  cwd: string,
  database: (path: string) => string,
  exists: Exists,
): { path: string; earlier: EarlierPath | null } {
  const path = resolve(configFile ? dirname(configFile) : cwd, value);
  const before = resolve(cwd, value);
  if (before === path || exists(database(path)) || !exists(database(before))) {
    return { path, earlier: null };
  }
  return { path: before, earlier: { setting, path: before, instead_of: path } };
}

/** keel.toml's store.url: a relative sqlite path resolved as resolveFromConfigFile says. */
export function findFileStoreUrl(
  url: string,
  configFile: string | null,
  cwd: string,
  exists: Exists,
): { url: string; earlier: EarlierPath | null } {
  if (!url.startsWith('sqlite:') || isAbsolute(url.slice('sqlite:'.length))) {
    return { url, earlier: null };
  }
  const found = resolveFromConfigFile(
    url.slice('sqlite:'.length),
    'store.url',
    configFile,
    cwd,
    (path) => path,
    exists,
  );
  return { url: `sqlite:${found.path}`, earlier: found.earlier };
}

/**
 * --data-dir > $KEEL_DATA_DIR (both relative to the working directory) > keel.toml's
 * data_dir (relative to the file's directory; see resolveFromConfigFile) >
 * $KEEL_HOME/data > ./.keel when it holds a keel.db (data of a keel that kept it in the
 * working directory; never silently replaced by an empty database) > $XDG_DATA_HOME/keel
 * (default ~/.local/share/keel).
 */
export function findDataDir(
  sources: { flag?: string | undefined; file?: string | undefined; configFile: string | null },
  env: NodeJS.ProcessEnv,
  cwd: string,
  exists: Exists,
): { path: string; from: DataDirSource; earlier: EarlierPath | null } {
  const found = (path: string, from: DataDirSource) => ({ path, from, earlier: null });
  if (sources.flag) return found(resolve(cwd, sources.flag), 'flag');
  if (env.KEEL_DATA_DIR) return found(resolve(cwd, env.KEEL_DATA_DIR), 'env');
  if (sources.file) {
    const { path, earlier } = resolveFromConfigFile(
      sources.file,
      'data_dir',
      sources.configFile,
      cwd,
      (dir) => join(dir, 'keel.db'),
      exists,
    );
    return { path, from: 'config', earlier };
  }
  if (env.KEEL_HOME) return found(join(resolve(cwd, env.KEEL_HOME), 'data'), 'keel_home');
  const legacy = join(cwd, '.keel');
  if (exists(join(legacy, 'keel.db'))) return found(legacy, 'legacy');
  return found(join(xdgBase(env, 'XDG_DATA_HOME', '.local/share'), 'keel'), 'xdg');
}

const SOURCE_WORDS: Record<DataDirSource, string> = {
  flag: '--data-dir',
  env: 'KEEL_DATA_DIR',
  config: 'data_dir of the config file',
  keel_home: 'KEEL_HOME',
  legacy: './.keel holds a keel.db',
  xdg: 'default: XDG_DATA_HOME/keel',
};

/** A store URL fit for a log line: of a PostgreSQL URL, no userinfo and no query but ?schema=. */
export function redactStoreUrl(url: string): string {
  if (!url.startsWith('postgres://') && !url.startsWith('postgresql://')) return url;
  return safePostgresUrl(url);
}

/** The warnings `keel serve` logs at start for paths kept where an earlier keel read them. */
export function describeEarlierPaths(
  files: FileLocations,
): { message: string; fields: Record<string, string> }[] {
  return files.earlier_paths.map(({ setting, path, instead_of }) => ({
    message: `keeping ${setting} at ${path} (relative to the working directory, where an earlier keel read it; the database is there) instead of ${instead_of} (relative to keel.toml, no database there); make the path in keel.toml absolute, or move the data (docs/configuration.md)`,
    fields: { setting, path, instead_of },
  }));
}

/** The one line `keel serve` logs at start: what it read, where it writes. */
export function describeFiles(config: {
  files: FileLocations;
  data_dir: string;
  store: { url: string };
}): { message: string; fields: Record<string, string> } {
  const configFile = config.files.config ?? 'none';
  const store = redactStoreUrl(config.store.url);
  return {
    message: `config ${configFile}; data dir ${config.data_dir} (${SOURCE_WORDS[config.files.data_dir_from]}); store ${store}`,
    fields: {
      config_file: configFile,
      data_dir: config.data_dir,
      data_dir_from: config.files.data_dir_from,
      store,
    },
  };
}
