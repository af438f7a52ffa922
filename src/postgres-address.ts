// What keel prints of a PostgreSQL URL: host:port/database, never the userinfo or the
// query. pg reads a password from `user:password@` and also from `?password=` and
// `?sslpassword=`, so redacting the userinfo alone is not enough. Pure (no pg import):
// the start log line (src/config-locations.ts) and the store's own messages share it.

/**
 * host:port/database of a PostgreSQL URL, or null when it does not parse cleanly: a
 * password with an unencoded "/" either fails to parse or ends up in the path
 * (`postgres://u:12/cd@h/db` reads as host "u", port 12, path "/cd@h/db").
 */
export function postgresAddress(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.pathname.includes('@')) return null;
  return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
}

/** The URL fit for a log line: scheme, address and keel's own ?schema=, nothing else. */
export function safePostgresUrl(url: string): string {
  const scheme = url.startsWith('postgresql://') ? 'postgresql' : 'postgres';
  const address = postgresAddress(url);
  if (address === null) return `${scheme}://<unparseable URL>`;
  const schema = new URL(url).searchParams.get('schema');
  return `${scheme}://${address}${schema === null ? '' : `?schema=${encodeURIComponent(schema)}`}`;
}
