// The web port handed to tools: the fetcher behind the public-web boundary plus the
// configured search backend. Built once by the composition root from `[web]` config.
// The fetcher and the search backends (undici, htmlparser2: ~0.1 s of CPU) are imported
// on the first fetch or search, not at every keel start: most processes make none.

import type { WebPort } from '../tools/builtin/web-port.ts';
import { WebError } from './errors.ts';
import type { Fetcher, FetcherOptions } from './fetcher.ts';
import type { Searcher } from './search.ts';

export interface WebClientOptions extends FetcherOptions {
  /** `[web] search_url`: a SearXNG-compatible endpoint, "duckduckgo", or "" (disabled). */
  searchUrl: string;
  /** Test seam: replaces the backend chosen from searchUrl. */
  searcher?: Searcher | null;
}

export function createWebClient(options: WebClientOptions): WebPort {
  let fetcher: Promise<Fetcher> | null = null;
  let searcher: Promise<Searcher | null> | null = null;
  return {
    async fetch(url, signal) {
      fetcher ??= import('./fetcher.ts').then(({ createFetcher }) => createFetcher(options));
      return (await fetcher)(url, signal);
    },
    async search(query, limit, signal) {
      searcher ??=
        options.searcher !== undefined
          ? Promise.resolve(options.searcher)
          : import('./search.ts').then(({ createSearcher }) => createSearcher(options.searchUrl));
      const backend = await searcher;
      if (!backend) {
        throw new WebError(
          'WEB_SEARCH_DISABLED',
          'web search is not configured on this keel (set [web] search_url to a SearXNG endpoint or "duckduckgo")',
        );
      }
      return backend(query, limit, signal);
    },
  };
}
