// `keel memory list|get|put|rm|search <namespace> …`: a tenant's facts over the API.
// list/get/rm share the CRUD noun shape (resource.ts); put takes the fact's text on the
// command line (a fact is one short text, not a document file), search prints each hit
// with its lexical and semantic rank so a ranking can be explained.

import { parseCommand } from './args.ts';
import { createClient } from './client.ts';
import { CLIENT_OPTIONS, CLIENT_USAGE, loadClientConfig } from './client-config.ts';
import { UsageError } from './errors.ts';
import type { ResourceSpec } from './resource.ts';
import { resourceCommand } from './resource.ts';
import { printList } from './table.ts';

type Print = (text: string) => void;

const rank = (value: unknown): string => (value === null || value === undefined ? '-' : `${value}`);

const FACTS: ResourceSpec = {
  noun: 'memory',
  parents: ['namespace'],
  listPath: ([namespace = '']) => `/memory/${encodeURIComponent(namespace)}`,
  listKey: 'items',
  columns: [
    { title: 'ID', value: (fact) => fact.id },
    { title: 'TEXT', value: (fact) => fact.text },
    { title: 'UPDATED', value: (fact) => fact.updated_at },
  ],
  itemPath: ([namespace = ''], id) =>
    `/memory/${encodeURIComponent(namespace)}/${encodeURIComponent(id)}`,
  itemKey: 'fact',
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
  const client = createClient(loadClientConfig(values));
  const base = `/memory/${encodeURIComponent(namespace)}`;
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
    await client.request('PUT', client.tenantPath(`${base}/${encodeURIComponent(second)}`), {
      text,
      ...(metadata !== undefined && { metadata }),
    });
    print(`memory ${namespace}/${second} saved\n`);
    return 0;
  }
  // search: the query is every word after the namespace.
  const query = new URLSearchParams({ q: [second, ...words].join(' ') });
  if (values.mode !== undefined) query.set('mode', values.mode);
  if (values.limit !== undefined) query.set('limit', values.limit);
  const body = await client.request('GET', client.tenantPath(`${base}/search?${query}`));
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
