// `keel artifacts list|get|put|rm`: a tenant's artifacts. list and rm share the CRUD noun
// shape (resource.ts); an artifact's body is bytes, so get writes them to stdout (or
// --out FILE) and put sends a file's bytes with its content type.

import { readFile, writeFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { parseCommand } from './args.ts';
import { CLIENT_OPTIONS, CLIENT_USAGE, loadClientConfig } from './client-config.ts';
import { UsageError } from './errors.ts';
import { connect } from './keel.ts';
import type { ResourceSpec } from './resource.ts';
import { LIST_FLAGS, resourceCommand } from './resource.ts';

const ARTIFACTS: ResourceSpec = {
  noun: 'artifacts',
  list: ({ keel, tenant }, _, query) => keel.artifacts.list(tenant, query),
  listKey: 'items',
  filters: ['prefix'],
  columns: [
    { title: 'PATH', value: (artifact) => artifact.path },
    { title: 'TYPE', value: (artifact) => artifact.content_type },
    { title: 'BYTES', value: (artifact) => artifact.size_bytes },
    { title: 'UPDATED', value: (artifact) => artifact.updated_at },
  ],
  // No JSON get: an artifact's body is bytes (artifactsCommand below).
  remove: ({ keel, tenant }, _, path) => keel.artifacts.delete(tenant, path),
};

// A few common types by extension; anything else is sent as bytes (--type overrides).
const TYPES: Record<string, string> = {
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.json': 'application/json',
  '.csv': 'text/csv; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.pdf': 'application/pdf',
  '.wasm': 'application/wasm',
};

export const ARTIFACTS_USAGE = `keel artifacts list [--prefix P] ${LIST_FLAGS} | get <path> [--out FILE] | put <path> <file> [--type T] | rm <path> ${CLIENT_USAGE}`;

const crud = resourceCommand(ARTIFACTS);

export async function artifactsCommand(
  argv: string[],
  print: (text: string) => void = (text) => process.stdout.write(text),
  writeBytes: (bytes: Uint8Array) => void = (bytes) => process.stdout.write(bytes),
): Promise<number> {
  const [action] = argv.filter((arg) => !arg.startsWith('-'));
  if (action !== 'get' && action !== 'put') return crud(argv, print);
  const { values, positionals } = parseCommand(argv, {
    ...CLIENT_OPTIONS,
    out: { type: 'string' },
    type: { type: 'string' },
  });
  const [, path, file] = positionals;
  if (!path || (action === 'put' && !file)) throw new UsageError(`usage: ${ARTIFACTS_USAGE}`);
  const { keel, tenant } = connect(loadClientConfig(values));
  if (action === 'get') {
    const { body: bytes } = await keel.artifacts.get(tenant, path);
    if (values.out === undefined) writeBytes(bytes);
    else {
      await writeFile(values.out, bytes);
      print(`artifacts ${path}: ${bytes.length} bytes written to ${values.out}\n`);
    }
    return 0;
  }
  const bytes = await readFile(file as string);
  const type =
    values.type ?? TYPES[extname(file as string).toLowerCase()] ?? 'application/octet-stream';
  await keel.artifacts.put(tenant, path, bytes, type);
  print(`artifacts ${path} saved (${bytes.length} bytes, ${type})\n`);
  return 0;
}
