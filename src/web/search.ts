// web_search backends: a SearXNG-compatible JSON endpoint (`GET <url>?q=…&format=json`)
// or DuckDuckGo's HTML page when `[web] search_url = "duckduckgo"`. The endpoint is the
// operator's choice, so it is fetched directly (it may be a SearXNG on the LAN) — the
// address check guards what the MODEL names, not what the operator configured.

import { request } from 'undici';
import type { SearchHit } from '../tools/builtin/web-port.ts';
import { WebError } from './errors.ts';
import { DomUtils, parseDocument } from 'htmlparser2';

const DUCKDUCKGO = 'duckduckgo';
const DUCKDUCKGO_HTML = 'https://html.duckduckgo.com/html/';
const SEARCH_TIMEOUT_MS = 20_000;
const MAX_SEARCH_BYTES = 2 * 1_048_576;

export type Searcher = (query: string, limit: number, signal: AbortSignal) => Promise<SearchHit[]>;

async function getText(url: URL, signal: AbortSignal): Promise<string> {
  try {
    const response = await request(url, {
      method: 'GET',
      signal: AbortSignal.any([signal, AbortSignal.timeout(SEARCH_TIMEOUT_MS)]),
      headers: { 'user-agent': 'keel-web-search/1', accept: 'application/json, text/html' },
    });
    if (response.statusCode < 200 || response.statusCode > 299) {
      response.body.on('error', () => undefined);
      response.body.destroy();
      throw new WebError(
        'WEB_SEARCH_FAILED',
        `search backend answered HTTP ${response.statusCode}`,
      );
    }
    const text = await response.body.text();
    if (text.length > MAX_SEARCH_BYTES)
      throw new WebError('WEB_SEARCH_FAILED', 'search answer too large');
    return text;
  } catch (error) {
    if (error instanceof WebError || signal.aborted) throw error;
    throw new WebError('WEB_SEARCH_FAILED', `search backend failed: ${(error as Error).message}`);
  }
}

/** SearXNG's `results: [{title, url, content}]`. */
function parseSearxng(text: string, limit: number): SearchHit[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new WebError('WEB_SEARCH_FAILED', 'search backend did not answer JSON');
  }
  const results = (parsed as { results?: unknown }).results;
  if (!Array.isArray(results))
    throw new WebError('WEB_SEARCH_FAILED', 'search answer has no results list');
  return results
    .filter((item): item is Record<string, unknown> => typeof item === 'object' && item !== null)
    .filter((item) => typeof item.url === 'string')
    .slice(0, limit)
    .map((item) => ({
      title: typeof item.title === 'string' ? item.title : '',
      url: item.url as string,
      snippet: typeof item.content === 'string' ? item.content : '',
    }));
}

type Element = Parameters<typeof DomUtils.getAttributeValue>[0];

function hasClass(element: Element, name: string): boolean {
  return (DomUtils.getAttributeValue(element, 'class') ?? '').split(/\s+/).includes(name);
}

function oneLine(element: Element | null): string {
  return element ? DomUtils.textContent(element).replace(/\s+/g, ' ').trim() : '';
}

/** The result block around a link: its nearest `result__body` / `results_links` ancestor. */
function resultOf(link: Element): Element | null {
  for (let node = link.parent; node; node = node.parent) {
    if (
      DomUtils.isTag(node) &&
      (hasClass(node, 'result__body') || hasClass(node, 'results_links'))
    ) {
      return node;
    }
  }
  return null;
}

/** DuckDuckGo HTML results: `result__a` links (with a uddg= redirect) and `result__snippet`. */
export function parseDuckDuckGo(html: string, limit: number): SearchHit[] {
  const hits: SearchHit[] = [];
  const links = DomUtils.findAll(
    (element) => hasClass(element, 'result__a'),
    parseDocument(html).children,
  );
  for (const link of links) {
    const result = resultOf(link);
    const href = DomUtils.getAttributeValue(link, 'href');
    if (!result || !href) continue;
    let url = href;
    const redirected = /[?&]uddg=([^&]+)/.exec(url);
    if (redirected) url = decodeURIComponent(redirected[1] ?? '');
    if (url.startsWith('//')) url = `https:${url}`;
    const snippet = DomUtils.findOne(
      (element) => hasClass(element, 'result__snippet'),
      result.children,
    );
    hits.push({ title: oneLine(link), url, snippet: oneLine(snippet) });
    if (hits.length >= limit) break;
  }
  return hits;
}

/** null when no backend is configured (web_search then answers WEB_SEARCH_DISABLED). */
export function createSearcher(searchUrl: string): Searcher | null {
  if (searchUrl.trim() === '') return null;
  if (searchUrl === DUCKDUCKGO) {
    return async (query, limit, signal) => {
      const url = new URL(DUCKDUCKGO_HTML);
      url.searchParams.set('q', query);
      return parseDuckDuckGo(await getText(url, signal), limit);
    };
  }
  return async (query, limit, signal) => {
    const url = new URL(searchUrl);
    url.searchParams.set('q', query);
    url.searchParams.set('format', 'json');
    return parseSearxng(await getText(url, signal), limit);
  };
}
