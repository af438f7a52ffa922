// `keel memory list|get|put|rm|search <namespace> …`: a tenant's facts over the API.
// list/get/rm share the CRUD noun shape (resource.ts); put takes the fact's text on the
// command line (a fact is one short text, not a document file), search prints each hit
// with its lexical and semantic rank so a ranking can be explained.

import { parseCommand } from './args.ts';
import { CLIENT_OPTIONS, CLIENT_USAGE, loadClientConfig } from './client-config.ts';
import { UsageError } from './errors.ts';
import { connect } from './keel.ts';
import type { ResourceSpec } from './resource.ts';
import { resourceCommand } from './resource.ts';
import { printList } from './table.ts';

type Print = (text: string) => void;

const rank = (value: unknown): string => (value === null || value === undefined ? '-' : `${value}`);

const FACTS: ResourceSpec = {
  noun: 'memory',
  parents: ['namespace'],
  list: ({ keel, tenant }, [namespace = ''], query) => keel.memory.list(tenant, namespace, query),
  listKey: 'items',
  columns: [
    { title: 'ID', value: (fact) => fact.id },
    { title: 'TEXT', value: (fact) => fact.text },
    { title: 'UPDATED', value: (fact) => fact.updated_at },
  ],
  get: ({ keel, tenant }, [namespace = ''], id) => keel.memory.get(tenant, namespace, id),
  itemKey: 'fact',
  remove: ({ keel, tenant }, [namespace = ''], id) => keel.memory.delete(tenant, namespace, id),
};

export const MEMORY_FACTS_USAGE = `keel memory list|get|rm <namespace> [<id>] | put <namespace> <id> <text> [--metadata JSON] | search <namespace> <query> [--mode fused|lexical|semantic] [--limit N] [--json] ${CLIENT_USAGE}`;

const crud = resourceCommand(FACTS);

export async function memoryFactsCommand(argv: string[], print: Print): Promise<number> {
  const [action] = argv.filter((arg) => !arg.startsWith('-'));
  if (action === 'list' || action === 'ls' || action === 'get' || action === 'rm')
    return crud(argv, print);
  const { values, positionals } = parseCommand(argv, {
    ...CLIENT_OPTIONS,
    metadata: { type: 'string' },
    mode: { type: 'string' },
    limit: { type: 'string' },
    json: { type: 'boolean' },
  });
  const [, namespace, second, ...words] = positionals;
  if (!namespace || !second) throw new UsageError(`usage: ${MEMORY_FACTS_USAGE}`);
  const { keel, tenant } = connect(loadClientConfig(values));
  if (action === 'put') {
    const text = words.join(' ');
    if (!text) throw new UsageError(`usage: ${MEMORY_FACTS_USAGE}`);
    let metadata: unknown;
    if (values.metadata !== undefined) {
      try {
        metadata = JSON.parse(values.metadata);
      } catch {
        throw new UsageError('--metadata: expected a JSON object');
      }
    }
    await keel.memory.put(tenant, namespace, second, {
      text,
      ...(metadata !== undefined && { metadata: metadata as Record<string, unknown> }),
    });
    print(`memory ${namespace}/${second} saved\n`);
    return 0;
  }
  // search: the query is every word after the namespace.
  const body = await keel.memory.search(tenant, namespace, {
    q: [second, ...words].join(' '),
    ...(values.mode !== undefined && { mode: values.mode as 'fused' }),
    ...(values.limit !== undefined && { limit: values.limit }),
  });
  printList(
    print,
    { items: body.results ?? [], raw: body },
    {
      json: values.json === true,
      empty: `no facts match in ${namespace}`,
      columns: [
        { title: 'ID', value: (hit) => hit.id },
        { title: 'SCORE', value: (hit) => Number(hit.score).toFixed(4) },
        { title: 'LEXICAL', value: (hit) => rank(hit.lexical_rank) },
        { title: 'SEMANTIC', value: (hit) => rank(hit.semantic_rank) },
        { title: 'TEXT', value: (hit) => hit.text },
      ],
    },
  );
  return 0;
}
