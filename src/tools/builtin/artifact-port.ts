// The artifact capability a tool call receives, already bound to the run's tenant.

import type { Artifact, ArtifactStat, JsonObject } from '../../types.ts';

export interface ArtifactPort {
  read(path: string): Promise<Artifact | null>;
  write(
    path: string,
    body: Uint8Array,
    contentType: string,
    metadata: JsonObject,
  ): Promise<{ artifact: ArtifactStat; created: boolean }>;
  list(
    prefix: string,
    limit: number,
    cursor?: string,
  ): Promise<{ items: ArtifactStat[]; next_cursor: string | null }>;
}
