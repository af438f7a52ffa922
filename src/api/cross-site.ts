// Cross-site request refusal (CSRF). In tokenless (loopback) mode the browser of
// whoever runs keel can reach it, so any web page could make it POST: a form or a
// `fetch(…, {mode: 'no-cors'})` with a CORS-safelisted content type (or none) is sent
// without a preflight. Two rules close that, for every state-changing method:
//   1. A request a browser marks as cross-site (`Sec-Fetch-Site: cross-site`, or an
//      `Origin` whose host:port is not the Host it was sent to) gets 403.
//   2. A body content type is required, and it must be one the route parses
//      (application/json; application/toml where the route takes TOML), even when the
//      route takes no body; anything else gets 415. A browser cannot send those
//      cross-origin without a CORS preflight, which keel never answers.
// Clients that are not browsers (CLI, curl, SDKs) only have to name the content type.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { KeelError } from '../errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route stores its body as bytes of any content type (artifact PUT). */
    any_content_type?: boolean;
  }
}

/** The methods that change state; GET/HEAD/OPTIONS are answered without side effects. */
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/**
 * DELETE takes no body and is not CORS-safelisted: a browser preflights it (and keel
 * answers no preflight), so it needs no content type; rule 1 still applies to it.
 */
const NEEDS_CONTENT_TYPE = new Set(['POST', 'PUT', 'PATCH']);

/** `scheme://host[:port]` of an Origin header → `host[:port]` lower-cased, or null. */
function originAuthority(origin: string): string | null {
  try {
    const url = new URL(origin);
    return url.host.toLowerCase();
  } catch {
    return null;
  }
}

/** The host:port the request was sent to, normalised like URL.host (default port dropped). */
function hostAuthority(host: string | undefined): string | null {
  if (!host) return null;
  try {
    return new URL(`http://${host}`).host.toLowerCase();
  } catch {
    return null;
  }
}

/** Why the request looks cross-site, or null. */
function crossSiteProblem(headers: FastifyRequest['headers']): string | null {
  if (headers['sec-fetch-site'] === 'cross-site') {
    return 'cross-site requests are refused (Sec-Fetch-Site: cross-site)';
  }
  const origin = headers.origin;
  if (typeof origin === 'string') {
    const from = originAuthority(origin);
    if (from === null || from !== hostAuthority(headers.host)) {
      return `cross-site requests are refused (Origin ${origin.slice(0, 200)} is not this server)`;
    }
  }
  return null;
}

/** The media type of a Content-Type header, lower-cased, without parameters. */
function mediaType(header: string | undefined): string | null {
  const type = header?.split(';')[0]?.trim().toLowerCase();
  return type ? type : null;
}

function contentTypeProblem(request: FastifyRequest): string | null {
  const accepted = ['application/json'];
  if (request.routeOptions.config.accepts_toml === true) accepted.push('application/toml');
  const type = mediaType(request.headers['content-type']);
  if (type !== null && accepted.includes(type)) return null;
  return `${request.method} needs content-type ${accepted.join(' or ')}${type === null ? ' (even without a body)' : `, got ${type.slice(0, 100)}`}`;
}

export function installCrossSiteGuard(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (!STATE_CHANGING.has(request.method) || request.is404) return;
    const crossSite = crossSiteProblem(request.headers);
    if (crossSite) throw new KeelError('CROSS_SITE_REQUEST', crossSite);
    // PUT of raw bytes: a browser preflights every PUT, so rule 1 is enough there.
    if (!NEEDS_CONTENT_TYPE.has(request.method) || request.routeOptions.config.any_content_type) {
      return;
    }
    const wrongType = contentTypeProblem(request);
    if (wrongType) throw new KeelError('UNSUPPORTED_MEDIA_TYPE', wrongType);
  });
}
