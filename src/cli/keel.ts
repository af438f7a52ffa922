// The CLI's connection to a keel server: the typed client (keel/client, src/client/) with
// the CLI's configuration, and a fetch that turns "nobody answers" into an UNREACHABLE
// KeelApiError naming the URL (the CLI prints it as it prints every API error).

import type { KeelClient } from '../client/index.ts';
import { createKeelClient, KeelApiError } from '../client/index.ts';
import type { ClientConfig } from './client-config.ts';

export interface Connection {
  readonly config: ClientConfig;
  /** The tenant every tenant route of this command addresses. */
  readonly tenant: string;
  readonly keel: KeelClient;
}

export function connect(config: ClientConfig): Connection {
  const reachable: typeof fetch = async (input, init) => {
    try {
      return await fetch(input, init);
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      throw new KeelApiError(
        0,
        'UNREACHABLE',
        `cannot reach keel at ${config.url}${cause ? ` (${cause})` : ''}`,
        null,
      );
    }
  };
  return {
    config,
    tenant: config.tenant,
    keel: createKeelClient({
      baseUrl: config.url,
      ...(config.token !== null && { token: config.token }),
      fetch: reachable,
    }),
  };
}
