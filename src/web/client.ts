// The web port handed to tools: the fetcher behind the public-web boundary plus the
// configured search backend. Built once by the composition root from `[web]` config.

import type { WebPort } from '../tools/builtin/web-port.ts';
import { WebError } from './errors.ts';
import type { FetcherOptions } from './fetcher.ts';
import { createFetcher } from './fetcher.ts';
import type { Searcher } from './search.ts';
import { createSearcher } from './search.ts';

export interface WebClientOptions extends FetcherOptions {
  /** `[web] search_url`: a SearXNG-compatible endpoint, "duckduckgo", or "" (disabled). */
  searchUrl: string;
  /** Test seam: replaces the backend chosen from searchUrl. */
  searcher?: Searcher | null;
}

export function createWebClient(options: WebClientOptions): WebPort {
  const fetcher = createFetcher(options);
  const searcher =
    options.searcher !== undefined ? options.searcher : createSearcher(options.searchUrl);
  return {
    fetch: fetcher,
    async search(query, limit, signal) {
      if (!searcher) {
        throw new WebError(
          'WEB_SEARCH_DISABLED',
          'web search is not configured on this keel (set [web] search_url to a SearXNG endpoint or "duckduckgo")',
        );
      }
      return searcher(query, limit, signal);
    },
  };
}
