// The shape every CRUD noun of the CLI shares (`keel agents|threads|schedules|artifacts|
// deliveries list|get|put|rm`): one description per noun (its own small file), one
// implementation here, so the nouns print, page and fail alike.

import { readFile } from 'node:fs/promises';
import { parseCommand } from './args.ts';
import type { KeelClient } from './client.ts';
import { createClient } from './client.ts';
import { CLIENT_OPTIONS, CLIENT_USAGE, loadClientConfig } from './client-config.ts';
import { UsageError } from './errors.ts';
import type { Column } from './table.ts';
import { printList } from './table.ts';

type Print = (text: string) => void;

export interface ResourceSpec {
  /** The command word, plural (`agents`). */
  noun: string;
  /** Positionals before the item name that every action takes (threads: `<agent>`). */
  parents?: string[];
  /** Path of the list under the tenant, from the parents. */
  listPath: (parents: string[]) => string;
  /** The array's key in the list response (`agents`, `items`). */
  listKey: string;
  columns: Column[];
  /** Path of one item; absent when the noun has no get/rm. */
  itemPath?: (parents: string[], name: string) => string;
  /** The object's key in a get response (`agent`), or null for the whole body. */
  itemKey?: string | null;
  /** false: no `get` (the item is not JSON, e.g. an artifact's bytes). */
  get?: false;
  /** put <name> <file>: TOML or JSON by the file's extension. */
  put?: boolean;
  /** The API takes only JSON for this noun: a TOML file is converted here first. */
  putAsJson?: boolean;
  /** Query flags `list` passes through (e.g. `status`, `prefix`). */
  filters?: string[];
}

export const LIST_FLAGS = '[--limit N] [--cursor C] [--json]';

export function resourceUsage(spec: ResourceSpec): string {
  const parents = (spec.parents ?? []).map((parent) => `<${parent}>`).join(' ');
  const before = parents ? ` ${parents}` : '';
  const filters = (spec.filters ?? []).map((filter) => ` [--${filter} X]`).join('');
  const actions = [`list${before}${filters} ${LIST_FLAGS}`];
  if (spec.itemPath && spec.get !== false) actions.push(`get${before} <name>`);
  if (spec.put) actions.push(`put${before} <name> <file.toml|file.json>`);
  if (spec.itemPath) actions.push(`rm${before} <name>`);
  return `keel ${spec.noun} ${actions.join(' | ')} ${CLIENT_USAGE}`;
}

async function list(
  client: KeelClient,
  spec: ResourceSpec,
  parents: string[],
  values: Record<string, unknown>,
  print: Print,
): Promise<void> {
  const query = new URLSearchParams();
  for (const key of ['limit', 'cursor', ...(spec.filters ?? [])]) {
    const value = values[key];
    if (typeof value === 'string') query.set(key, value);
  }
  const path = `${spec.listPath(parents)}${query.size > 0 ? `?${query}` : ''}`;
  const body = await client.request('GET', client.tenantPath(path));
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
    const client = createClient(loadClientConfig(values));
    const itemPath = (): string => {
      if (!spec.itemPath || !name) return usage();
      return client.tenantPath(spec.itemPath(parents, name));
    };
    switch (action) {
      case 'list':
      case 'ls':
        await list(client, spec, parents, values, print);
        return 0;
      case 'get': {
        if (spec.get === false) return usage();
        const body = await client.request('GET', itemPath());
        const item = spec.itemKey ? body[spec.itemKey] : body;
        print(`${JSON.stringify(item, null, 2)}\n`);
        return 0;
      }
      case 'put': {
        if (!spec.put || !file) return usage();
        const text = await readFile(file, 'utf8');
        const json = file.endsWith('.json');
        if (spec.putAsJson && !json) {
          await client.request(
            'PUT',
            itemPath(),
            JSON.stringify(await tomlToJson(file, text)),
            'application/json',
          );
        } else {
          await client.request(
            'PUT',
            itemPath(),
            text,
            json ? 'application/json' : 'application/toml',
          );
        }
        print(`${spec.noun} ${name} saved\n`);
        return 0;
      }
      case 'rm':
      case 'delete':
        await client.request('DELETE', itemPath());
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
