// The methods each route path answers, recorded as routes are added, so that a known
// path asked with another method gets 405 METHOD_NOT_ALLOWED and an Allow header
// instead of 404 ROUTE_NOT_FOUND (RFC 9110 §15.5.6).

import type { HTTPMethods } from 'fastify';

function escapeForPattern(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** fastify's path syntax as keel uses it: `:name` is one segment, `*` the rest. */
function pathPattern(url: string): RegExp {
  const segments = url
    .split('/')
    .map((segment) =>
      segment === '*' ? '.*' : segment.startsWith(':') ? '[^/]+' : escapeForPattern(segment),
    );
  return new RegExp(`^${segments.join('/')}$`);
}

export class RouteMethods {
  private readonly routes: { pattern: RegExp; methods: string[] }[] = [];

  record(method: HTTPMethods | HTTPMethods[], url: string): void {
    this.routes.push({
      pattern: pathPattern(url),
      methods: (Array.isArray(method) ? method : [method]).map((name) => name.toUpperCase()),
    });
  }

  /** The methods some route answers for this path (without its query), sorted. */
  allowed(path: string): string[] {
    const methods = new Set<string>();
    for (const route of this.routes) {
      if (route.pattern.test(path)) for (const method of route.methods) methods.add(method);
    }
    return [...methods].sort();
  }
}
