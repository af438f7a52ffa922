// A TCP proxy between keel and PostgreSQL, for fault injection that touches only the
// keel under test (other test files share the server): `terminateBackends` ends the
// backends behind this proxy with pg_terminate_backend (found by the proxy's own
// client ports), `cut` refuses and drops every connection (the server unreachable),
// `restore` lets them through again.

import type { Socket } from 'node:net';
import { connect, createServer } from 'node:net';
import pg from 'pg';

export interface PgProxy {
  /** postgres://… pointing at the proxy, with the upstream URL's user, database, query. */
  url: string;
  /** Ends the server processes of every connection through the proxy; returns how many. */
  terminateBackends(): Promise<number>;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startPgProxy(upstreamUrl: string): Promise<PgProxy> {
  const upstream = new URL(upstreamUrl);
  const upstreamHost = upstream.hostname;
  const upstreamPort = Number(upstream.port || 5432);
  const pairs = new Set<{ client: Socket; server: Socket }>();
  let cut = false;

  const server = createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    const toServer = connect(upstreamPort, upstreamHost);
    const pair = { client, server: toServer };
    pairs.add(pair);
    const drop = (): void => {
      pairs.delete(pair);
      client.destroy();
      toServer.destroy();
    };
    client.on('error', drop).on('close', drop);
    toServer.on('error', drop).on('close', drop);
    client.pipe(toServer);
    toServer.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const proxied = new URL(upstreamUrl);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(port);

  const admin = new pg.Client({ connectionString: upstreamUrl });
  await admin.connect();
  const cutAll = (): void => {
    cut = true;
    for (const pair of [...pairs]) {
      pair.client.destroy();
      pair.server.destroy();
    }
    pairs.clear();
  };

  return {
    url: proxied.toString(),
    async terminateBackends() {
      const ports = [...pairs].map((pair) => pair.server.localPort).filter(Boolean);
      if (ports.length === 0) return 0;
      const result = await admin.query<{ ok: boolean }>(
        `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
          WHERE client_port = ANY($1::int[]) AND client_addr IN ('127.0.0.1', '::1')
            AND pid <> pg_backend_pid()`,
        [ports],
      );
      return result.rows.filter((row) => row.ok).length;
    },
    cut: cutAll,
    restore() {
      cut = false;
    },
    async close() {
      cutAll();
      await admin.end().catch(() => undefined);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
