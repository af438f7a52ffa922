// `keel artifacts list|rm`: a tenant's artifacts (bodies are bytes: read them over HTTP,
// GET …/artifacts/<path>).

import type { ResourceSpec } from './resource.ts';
import { resourceCommand, resourceUsage } from './resource.ts';

const ARTIFACTS: ResourceSpec = {
  noun: 'artifacts',
  listPath: () => '/artifacts',
  listKey: 'items',
  filters: ['prefix'],
  columns: [
    { title: 'PATH', value: (artifact) => artifact.path },
    { title: 'TYPE', value: (artifact) => artifact.content_type },
    { title: 'BYTES', value: (artifact) => artifact.size_bytes },
    { title: 'UPDATED', value: (artifact) => artifact.updated_at },
  ],
  // Artifact paths keep their slashes: each segment is encoded on its own.
  itemPath: (_, path) => `/artifacts/${path.split('/').map(encodeURIComponent).join('/')}`,
  get: false,
};

export const ARTIFACTS_USAGE = resourceUsage(ARTIFACTS);
export const artifactsCommand = resourceCommand(ARTIFACTS);
