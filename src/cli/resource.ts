// The shape every CRUD noun of the CLI shares (`keel agents|threads|schedules|artifacts|
// deliveries list|get|put|rm`): one description per noun (its own small file), one
// implementation here, so the nouns print, page and fail alike.

import { readFile } from 'node:fs/promises';
import { parseCommand } from './args.ts';
import { CLIENT_OPTIONS, CLIENT_USAGE, loadClientConfig } from './client-config.ts';
import { UsageError } from './errors.ts';
import type { Connection } from './keel.ts';
import { connect } from './keel.ts';
import type { Column } from './table.ts';
import { printList } from './table.ts';
import { everyItem } from './every-page.ts';

type Print = (text: string) => void;
// The nouns' bodies differ; the table columns read them loosely.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

export interface ResourceSpec {
  /** The command word, plural (`agents`). */
  noun: string;
  /** Positionals before the item name that every action takes (threads: `<agent>`). */
  parents?: string[];
  /** One page of the list (typed client call); `query` holds --limit, --cursor, filters. */
  list: (c: Connection, parents: string[], query: Record<string, string>) => Promise<Loose>;
  /** The array's key in the list response (`agents`, `items`). */
  listKey: string;
  columns: Column[];
  /** One item; absent when the noun has no get (an artifact's body is bytes). */
  get?: (c: Connection, parents: string[], name: string) => Promise<Loose>;
  /** The object's key in a get response (`agent`), or null for the whole body. */
  itemKey?: string | null;
  /** put <name> <file>: the document's text (TOML or JSON by the file's extension). */
  put?: (c: Connection, name: string, text: string, contentType: string) => Promise<unknown>;
  /** The API takes only JSON for this noun: a TOML file is converted here first. */
  putAsJson?: boolean;
  /** rm <name>; absent when the noun has none. */
  remove?: (c: Connection, parents: string[], name: string) => Promise<unknown>;
  /** Query flags `list` passes through (e.g. `status`, `prefix`). */
  filters?: string[];
  /**
   * Without --limit or --cursor, `list` follows next_cursor and prints every item (a
   * noun whose list was not paged before, so its output stays complete).
   */
  allPages?: boolean;
}

export const LIST_FLAGS = '[--limit N] [--cursor C] [--json]';

export function resourceUsage(spec: ResourceSpec): string {
  const parents = (spec.parents ?? []).map((parent) => `<${parent}>`).join(' ');
  const before = parents ? ` ${parents}` : '';
  const filters = (spec.filters ?? []).map((filter) => ` [--${filter} X]`).join('');
  const actions = [`list${before}${filters} ${LIST_FLAGS}`];
  if (spec.get) actions.push(`get${before} <name>`);
  if (spec.put) actions.push(`put${before} <name> <file.toml|file.json>`);
  if (spec.remove) actions.push(`rm${before} <name>`);
  return `keel ${spec.noun} ${actions.join(' | ')} ${CLIENT_USAGE}`;
}

async function list(
  client: Connection,
  spec: ResourceSpec,
  parents: string[],
  values: Record<string, unknown>,
  print: Print,
): Promise<void> {
  const query: Record<string, string> = {};
  for (const key of ['limit', 'cursor', ...(spec.filters ?? [])]) {
    const value = values[key];
    if (typeof value === 'string') query[key] = value;
  }
  const body =
    spec.allPages && query.limit === undefined && query.cursor === undefined
      ? {
          [spec.listKey]: await everyItem(
            (cursor) => spec.list(client, parents, cursor ? { ...query, cursor } : query),
            spec.listKey,
          ),
          next_cursor: null,
        }
      : await spec.list(client, parents, query);
  printList(
    print,
    { items: body[spec.listKey] ?? [], next_cursor: body.next_cursor, raw: body },
    {
      json: values.json === true,
      columns: spec.columns,
      empty: `no ${spec.noun}${parents.length > 0 ? ` for ${parents.join(' ')}` : ''}`,
    },
  );
}

export function resourceCommand(spec: ResourceSpec) {
  return async (argv: string[], print: Print = (text) => process.stdout.write(text)) => {
    const options: Record<string, { type: 'string' } | { type: 'boolean' }> = {
      ...CLIENT_OPTIONS,
      limit: { type: 'string' },
      cursor: { type: 'string' },
      json: { type: 'boolean' },
    };
    for (const filter of spec.filters ?? []) options[filter] = { type: 'string' };
    const { values, positionals } = parseCommand(argv, options);
    const [action = 'list', ...rest] = positionals;
    const parentCount = spec.parents?.length ?? 0;
    const parents = rest.slice(0, parentCount);
    const [name, file] = rest.slice(parentCount);
    const usage = (): never => {
      throw new UsageError(`usage: ${resourceUsage(spec)}`);
    };
    if (parents.length < parentCount) usage();
    const client = connect(loadClientConfig(values));
    const itemName = (): string => name ?? usage();
    switch (action) {
      case 'list':
      case 'ls':
        await list(client, spec, parents, values, print);
        return 0;
      case 'get': {
        if (!spec.get) return usage();
        const body = await spec.get(client, parents, itemName());
        const item = spec.itemKey ? body[spec.itemKey] : body;
        print(`${JSON.stringify(item, null, 2)}\n`);
        return 0;
      }
      case 'put': {
        if (!spec.put || !name || !file) return usage();
        const text = await readFile(file, 'utf8');
        const json = file.endsWith('.json');
        if (spec.putAsJson && !json) {
          const converted = JSON.stringify(await tomlToJson(file, text));
          await spec.put(client, name, converted, 'application/json');
        } else {
          await spec.put(client, name, text, json ? 'application/json' : 'application/toml');
        }
        print(`${spec.noun} ${name} saved\n`);
        return 0;
      }
      case 'rm':
      case 'delete':
        if (!spec.remove) return usage();
        await spec.remove(client, parents, itemName());
        print(`${spec.noun} ${name} removed\n`);
        return 0;
      default:
        return usage();
    }
  };
}

/** A TOML file as the JSON object the API takes; a syntax error names the file and line. */
async function tomlToJson(file: string, text: string): Promise<unknown> {
  const { parse, TomlError } = await import('smol-toml');
  try {
    return parse(text);
  } catch (error) {
    if (error instanceof TomlError) {
      throw new Error(
        `${file}: invalid TOML at line ${error.line}: ${error.message.split('\n')[0]}`,
      );
    }
    throw error;
  }
}
