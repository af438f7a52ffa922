// web_fetch's network path, the public-web boundary of docs/web-boundary.md:
//   * http/https only; every hop (at most 5 redirects, followed by hand) is checked again;
//   * the host is resolved once per hop and EVERY address must be public (address.ts),
//     unless the host is in `[web] allow_hosts` — the only opening;
//   * the connection is pinned to the checked address: the hop's undici Agent gets a
//     `connect.lookup` that answers with that address and never asks DNS again, so an
//     answer that changes between check and connect (rebinding) is never used;
//   * 20 s per hop (connect, headers and the whole body) and 25 s for the whole fetch,
//     DNS and redirects included; the caller's signal (run cancel, tool timeout) ends it
//     at once; every hop's connection is destroyed when the hop is done;
//   * 1 MiB of body at most, counted after any content decoding (body.ts); text-like
//     content types only, decoded per charset.ts; HTML reduced to title + text.

import { lookup as dnsLookup } from 'node:dns/promises';
import { Agent, request } from 'undici';
import type { Dispatcher } from 'undici';
import type { FetchedPage } from '../tools/builtin/web-port.ts';
import type { ParsedAddress } from './address.ts';
import { classifyAddress, formatAddress, parseIpLiteral } from './address.ts';
import { canonicalHost, hostAllowList } from './allow-hosts.ts';
import { pinnedLookup } from './pinned-lookup.ts';
import { bodyDecoding, readCapped } from './body.ts';
import { decodeText, sniffEncoding } from './charset.ts';
import { WebError } from './errors.ts';
import { htmlToText } from './html.ts';

export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

const defaultResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface FetcherOptions {
  /** DNS, injectable so tests simulate answers. Default: dns.promises.lookup, all addresses. */
  resolve?: Resolver;
  /** Hosts (host or host:port, src/web/allow-hosts.ts) that may be non-public (`[web] allow_hosts`). */
  allowHosts?: readonly string[];
  maxRedirects?: number;
  hopTimeoutMs?: number;
  /** The whole fetch: DNS, every hop, every body. */
  totalTimeoutMs?: number;
  maxBytes?: number;
  /**
   * Builds the connection for one hop, pinned to `address`. Tests wrap it to watch every
   * connection attempt; the default is an undici Agent with a pinning lookup.
   */
  dispatcherFor?: (address: ParsedAddress, hostname: string, timeoutMs: number) => Dispatcher;
  userAgent?: string;
}

// The total stays under the default tool_timeout_ms (30 s), so a slow site reaches the
// model as WEB_TIMEOUT rather than the runtime's generic TOOL_TIMEOUT.
export const WEB_LIMITS = {
  maxRedirects: 5,
  hopTimeoutMs: 20_000,
  totalTimeoutMs: 25_000,
  maxBytes: 1_048_576,
} as const;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const TEXT_CONTENT =
  /^(text\/[\w.+-]+|application\/([\w.+-]*\+)?(json|xml)|application\/(javascript|x-ndjson|ld\+json|rss\+xml|atom\+xml|xhtml\+xml))$/i;

/** An undici Agent whose every connection goes to `address`, whatever DNS says later. */
export function pinnedAgent(address: ParsedAddress, timeoutMs: number): Agent {
  const lookup = pinnedLookup(address);
  return new Agent({
    connect: { lookup, timeout: timeoutMs } as unknown as Agent.Options['connect'],
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connections: 1,
    pipelining: 0,
  });
}

function parseUrl(text: string, base?: URL): URL {
  let url: URL;
  try {
    url = base ? new URL(text, base) : new URL(text);
  } catch {
    throw new WebError('WEB_INVALID_URL', `not a valid URL: ${text.slice(0, 200)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new WebError(
      'WEB_SCHEME_NOT_ALLOWED',
      `only http and https URLs are fetched, not ${url.protocol}`,
    );
  }
  return url;
}

function mediaType(header: string | string[] | undefined): {
  type: string;
  charset: string | null;
} {
  const value = (Array.isArray(header) ? header[0] : header) ?? 'text/plain';
  const [type = '', ...params] = value.split(';');
  const charset = params
    .map((param) => /^\s*charset\s*=\s*"?([\w.:-]+)"?\s*$/i.exec(param)?.[1])
    .find(Boolean);
  return { type: type.trim().toLowerCase(), charset: charset ?? null };
}

/** Drops a body we will not read; the abort it causes is expected, not an error. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** `promise`, or the signal's reason as soon as it fires: DNS lookups take no signal. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error as Error);
      },
    );
  });
}

const UNDICI_TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

type HopResult = { page: FetchedPage } | { location: string };

interface HopContext {
  url: URL;
  /** The caller's signal: run cancel, tool timeout. */
  signal: AbortSignal;
  deadline: AbortSignal;
  hopDeadline: AbortSignal;
  totalTimeoutMs: number;
  hopTimeoutMs: number;
}

/** What a failed hop tells the model; a caller's abort stays the caller's own reason. */
function asWebError(error: unknown, hop: HopContext): unknown {
  if (error instanceof WebError) return error;
  // As fetch() does: the caller learns its own reason, and the runtime sees its abort.
  if (hop.signal.aborted) return hop.signal.reason;
  if (hop.deadline.aborted) {
    return new WebError(
      'WEB_TIMEOUT',
      `fetching ${hop.url.host} did not finish within ${hop.totalTimeoutMs} ms (redirects included)`,
    );
  }
  const code = String((error as { code?: unknown }).code ?? '');
  if (hop.hopDeadline.aborted || UNDICI_TIMEOUT_CODES.has(code)) {
    return new WebError(
      'WEB_TIMEOUT',
      `${hop.url.host} did not answer in full within ${hop.hopTimeoutMs} ms`,
    );
  }
  return new WebError(
    'WEB_FETCH_FAILED',
    `fetching ${hop.url.host} failed: ${(error as Error).message}`,
  );
}

export type Fetcher = (url: string, signal: AbortSignal) => Promise<FetchedPage>;

export function createFetcher(options: FetcherOptions = {}): Fetcher {
  const resolve = options.resolve ?? defaultResolver;
  const allows = hostAllowList(options.allowHosts ?? []);
  const maxRedirects = options.maxRedirects ?? WEB_LIMITS.maxRedirects;
  const hopTimeoutMs = options.hopTimeoutMs ?? WEB_LIMITS.hopTimeoutMs;
  const totalTimeoutMs = options.totalTimeoutMs ?? WEB_LIMITS.totalTimeoutMs;
  const maxBytes = options.maxBytes ?? WEB_LIMITS.maxBytes;
  const dispatcherFor =
    options.dispatcherFor ?? ((address, _host, timeout) => pinnedAgent(address, timeout));

  /** The one address this hop may connect to, after checking every address of the host. */
  async function checkedAddress(url: URL, signal: AbortSignal): Promise<ParsedAddress> {
    const host = canonicalHost(url.hostname);
    const isAllowed = allows(url);
    let addresses: ParsedAddress[];
    const literal = parseIpLiteral(url.hostname);
    if (literal) {
      addresses = [literal];
    } else {
      if (!isAllowed && (host === 'localhost' || host.endsWith('.localhost'))) {
        throw new WebError('WEB_ADDRESS_BLOCKED', `${host} is a loopback name`);
      }
      let answers: { address: string }[];
      try {
        answers = await untilAborted(resolve(host), signal);
      } catch (error) {
        if (signal.aborted) throw error;
        throw new WebError('WEB_DNS_FAILED', `cannot resolve ${host}: ${(error as Error).message}`);
      }
      addresses = answers.map((answer) => {
        const parsed = parseIpLiteral(answer.address);
        if (!parsed) throw new WebError('WEB_DNS_FAILED', `${host} resolved to a non-address`);
        return parsed;
      });
      if (addresses.length === 0) throw new WebError('WEB_DNS_FAILED', `${host} has no address`);
    }
    if (!isAllowed) {
      for (const address of addresses) {
        const verdict = classifyAddress(address);
        if (!verdict.public) {
          throw new WebError(
            'WEB_ADDRESS_BLOCKED',
            `${host} is not public: ${formatAddress(address)} is ${verdict.reason}`,
          );
        }
      }
    }
    // Credentials in a URL are never sent (checked after the address, which is the
    // host the URL really names: "http://public@127.0.0.1/" is 127.0.0.1).
    if (url.username !== '' || url.password !== '') {
      throw new WebError('WEB_INVALID_URL', 'URLs with credentials (user:pass@) are not fetched');
    }
    return addresses[0] as ParsedAddress;
  }

  async function readResponse(url: URL, response: Dispatcher.ResponseData): Promise<HopResult> {
    const location = response.headers.location;
    if (REDIRECT_STATUSES.has(response.statusCode) && typeof location === 'string') {
      discard(response.body);
      return { location };
    }
    if (response.statusCode < 200 || response.statusCode > 299) {
      throw new WebError('WEB_HTTP_STATUS', `${url.host} answered HTTP ${response.statusCode}`);
    }
    const { type, charset } = mediaType(response.headers['content-type']);
    if (!TEXT_CONTENT.test(type)) {
      throw new WebError('WEB_CONTENT_TYPE', `content type ${type || '(none)'} is not text`);
    }
    const decoding = bodyDecoding(response.headers['content-encoding']);
    const { bytes, truncated } = await readCapped(response.body, decoding, maxBytes);
    const text = decodeText(bytes, sniffEncoding(bytes, charset, type), !truncated);
    const page =
      type === 'text/html' || type === 'application/xhtml+xml'
        ? htmlToText(text)
        : { title: null, text };
    return {
      page: {
        url: url.href,
        status: response.statusCode,
        content_type: type,
        title: page.title,
        text: page.text,
        truncated,
      },
    };
  }

  /** One request and its body, on a connection of its own that goes away with the hop. */
  async function exchange(
    url: URL,
    dispatcher: Dispatcher,
    signal: AbortSignal,
  ): Promise<HopResult> {
    try {
      // The signal also covers the body: undici destroys it when the signal fires.
      const response = await request(url, {
        dispatcher,
        method: 'GET',
        signal,
        headers: {
          'user-agent': options.userAgent ?? 'keel-web-fetch/1',
          accept: 'text/html, text/plain, application/json, application/xml;q=0.9, text/*;q=0.8',
          'accept-encoding': 'identity',
        },
      });
      try {
        return await readResponse(url, response);
      } catch (error) {
        discard(response.body);
        throw error;
      }
    } finally {
      // destroy, not close: close waits for a server that may never finish.
      await dispatcher.destroy().catch(() => undefined);
    }
  }

  return async function fetchPublic(text, signal) {
    if (signal.aborted) throw signal.reason;
    const deadline = AbortSignal.timeout(totalTimeoutMs);
    let url = parseUrl(text);
    for (let redirects = 0; ; redirects += 1) {
      const hopDeadline = AbortSignal.timeout(hopTimeoutMs);
      const hopSignal = AbortSignal.any([signal, deadline, hopDeadline]);
      const context = { url, signal, deadline, hopDeadline, totalTimeoutMs, hopTimeoutMs };
      const fail = (error: unknown): never => {
        throw asWebError(error, context);
      };
      const address = await checkedAddress(url, hopSignal).catch(fail);
      // Not under `fail`: a factory that refuses (the tests' guard) is no network failure.
      const dispatcher = dispatcherFor(address, url.hostname, hopTimeoutMs);
      const result = await exchange(url, dispatcher, hopSignal).catch(fail);
      if ('page' in result) return result.page;
      if (redirects >= maxRedirects) {
        throw new WebError('WEB_TOO_MANY_REDIRECTS', `more than ${maxRedirects} redirects`);
      }
      url = parseUrl(result.location, url);
    }
  };
}
