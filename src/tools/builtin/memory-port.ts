// The memory capability a tool call receives, already bound to the run's tenant, plus
// the maintainer's scan bookkeeping (src/memory/maintenance.ts) the tools consult.

import type { SearchMode } from '../../memory/service.ts';
import type { MemoryFact, MemorySearchResult } from '../../types.ts';

export interface MemoryPort {
  put(namespace: string, id: string, text: string): Promise<{ fact: MemoryFact; created: boolean }>;
  get(namespace: string, id: string): Promise<MemoryFact | null>;
  search(
    namespace: string,
    query: string,
    limit: number,
    mode?: SearchMode,
  ): Promise<MemorySearchResult[]>;
  list(
    namespace: string,
    limit: number,
    cursor?: string,
  ): Promise<{ items: MemoryFact[]; next_cursor: string | null }>;
  delete(namespace: string, id: string): Promise<boolean>;
  /** The maintainer's listing progress per run and namespace (host-enforced rule). */
  scans: {
    listed(runId: string, namespace: string, cursor: string | undefined, next: string | null): void;
    isComplete(runId: string, namespace: string): boolean;
  };
}
