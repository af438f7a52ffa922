// One dedicated LISTEN connection per store: delivers other processes' change
// notifications (run.queued / run.event / run.terminal / resource.changed) to this
// process's listeners.
// Its own notifications come back too and are skipped (they were delivered locally
// right after the commit). When the connection drops, notifications sent meanwhile
// are lost: it reconnects with backoff, and once back it tells this process's listeners
// so (a `store.resync` change): the worker starts a claim round, SSE streams replay the
// trace from their last seq, long polls read their run again.

import pg from 'pg';
import type { PgContext } from './context.ts';
import { decodeChange, quoteIdent } from './context.ts';

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;

export class ChangeListenerConnection {
  private client: pg.Client | null = null;
  private closed = false;
  private retryMs = RECONNECT_MIN_MS;
  private timer: NodeJS.Timeout | null = null;
  private everConnected = false;
  /** True while LISTEN is active; false while reconnecting. */
  connected = false;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly ctx: PgContext,
    private readonly onState: (connected: boolean, error?: Error) => void = () => undefined,
    /** Other channels heard on the same connection (live-only messages). */
    private readonly extraChannels: readonly {
      channel: string;
      receive(payload: string): void;
    }[] = [],
  ) {}

  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client(this.config);
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    client.on('notification', (message) => {
      if (message.payload === undefined) return;
      const extra = this.extraChannels.find((entry) => entry.channel === message.channel);
      if (extra) {
        extra.receive(message.payload);
        return;
      }
      if (message.channel !== this.ctx.channel) return;
      const decoded = decodeChange(message.payload);
      if (decoded && decoded.origin !== this.ctx.origin) this.ctx.notify([decoded.change]);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${quoteIdent(this.ctx.channel)}`);
      for (const extra of this.extraChannels) {
        await client.query(`LISTEN ${quoteIdent(extra.channel)}`);
      }
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    const reconnected = this.everConnected;
    this.client = client;
    this.connected = true;
    this.everConnected = true;
    this.retryMs = RECONNECT_MIN_MS;
    this.onState(true);
    // Notifications sent while we were away are gone: listeners catch up by reading.
    if (reconnected) this.ctx.notify([{ kind: 'store.resync', tenant: null, run_id: null }]);
  }

  private lost(client: pg.Client, error?: Error): void {
    if (this.client !== client || this.closed) return;
    this.client = null;
    this.connected = false;
    this.onState(false, error);
    client.end().catch(() => undefined);
    this.schedule();
  }

  private schedule(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.connect().catch(() => {
        this.retryMs = Math.min(this.retryMs * 2, RECONNECT_MAX_MS);
        this.schedule();
      });
    }, this.retryMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = null;
    this.connected = false;
    await client?.end().catch(() => undefined);
  }
}
