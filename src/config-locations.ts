// Where keel finds its config file and keeps its data when no path is given, so an
// installed `keel serve` works from any directory (docs/configuration.md, "Where keel
// keeps its files"). Pure: src/config.ts passes the environment, the working directory
// and a file-exists check in, and stays the only reader of process.env.

import { userInfo } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { KeelError } from './errors.ts';

/** What chose the data dir; `keel serve` prints it beside the path. */
export type DataDirSource = 'flag' | 'env' | 'config' | 'keel_home' | 'legacy' | 'xdg';

export interface FileLocations {
  /** The keel.toml read (absolute), or null: none found, defaults only. */
  config: string | null;
  data_dir_from: DataDirSource;
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
 * --data-dir > $KEEL_DATA_DIR (both relative to the working directory) > keel.toml's
 * data_dir (relative to the file's directory) > $KEEL_HOME/data > ./.keel when it holds a
 * keel.db (data of a keel that kept it in the working directory; never silently replaced
 * by an empty database) > $XDG_DATA_HOME/keel (default ~/.local/share/keel).
 */
export function findDataDir(
  sources: { flag?: string | undefined; file?: string | undefined; configFile: string | null },
  env: NodeJS.ProcessEnv,
  cwd: string,
  exists: Exists,
): { path: string; from: DataDirSource } {
  if (sources.flag) return { path: resolve(cwd, sources.flag), from: 'flag' };
  if (env.KEEL_DATA_DIR) return { path: resolve(cwd, env.KEEL_DATA_DIR), from: 'env' };
  if (sources.file) {
    const base = sources.configFile ? dirname(sources.configFile) : cwd;
    return { path: resolve(base, sources.file), from: 'config' };
  }
  if (env.KEEL_HOME) return { path: join(resolve(cwd, env.KEEL_HOME), 'data'), from: 'keel_home' };
  const legacy = join(cwd, '.keel');
  if (exists(join(legacy, 'keel.db'))) return { path: legacy, from: 'legacy' };
  return { path: join(xdgBase(env, 'XDG_DATA_HOME', '.local/share'), 'keel'), from: 'xdg' };
}

const SOURCE_WORDS: Record<DataDirSource, string> = {
  flag: '--data-dir',
  env: 'KEEL_DATA_DIR',
  config: 'data_dir of the config file',
  keel_home: 'KEEL_HOME',
  legacy: './.keel holds a keel.db',
  xdg: 'default: XDG_DATA_HOME/keel',
};

/** A store URL fit for a log line: a PostgreSQL password becomes "***". */
export function redactStoreUrl(url: string): string {
  if (!url.startsWith('postgres://') && !url.startsWith('postgresql://')) return url;
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
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
