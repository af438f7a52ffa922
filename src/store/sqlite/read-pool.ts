// Worker threads with their own connections to the store's database file, for reads
// that are long enough to stall the event loop: the exact vector scan of memory search
// (100k facts ≈ 40 MB of vectors per query). A batch of statements is spread over the
// threads and runs in parallel; each thread answers its statements in order. WAL lets
// these readers see every committed write without blocking the writer.

import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/** Threads by default: one per core, at most as many as the vector shards. */
export function defaultReadThreads(limit: number): number {
  return Math.max(1, Math.min(limit, availableParallelism()));
}

export interface ReadStatement {
  sql: string;
  params: readonly unknown[];
}

interface Pending {
  resolve: (rows: unknown[]) => void;
  reject: (error: Error) => void;
}

type WorkerReply =
  | { ready: true }
  | { id: number; rows: unknown[]; error?: undefined }
  | { id: number; error: string; rows?: undefined };

class ReadThread {
  /** Statements handed to this thread and not yet answered (counted before it started). */
  load = 0;
  private readonly pending = new Map<number, Pending>();
  private readonly worker: Worker;
  private readonly started: Promise<void>;
  private failure: Error | null = null;
  private ready = false;

  constructor(path: string, pragmas: readonly string[], onExit: () => void) {
    this.worker = new Worker(new URL('./read-worker.mjs', import.meta.url), {
      workerData: { path, pragmas },
    });
    // An idle pool must not keep the process alive; a thread with work does (ref below).
    this.worker.unref();
    this.started = new Promise((resolve, reject) => {
      this.worker.on('message', (reply: WorkerReply) => {
        if ('ready' in reply) {
          this.ready = true;
          return resolve();
        }
        const pending = this.pending.get(reply.id);
        if (!pending) return;
        this.pending.delete(reply.id);
        if (this.pending.size === 0) this.worker.unref();
        if (reply.error !== undefined) pending.reject(new Error(`read pool: ${reply.error}`));
        else pending.resolve(reply.rows);
      });
      this.worker.on('error', (error) => {
        this.failure = error;
        reject(error);
      });
      this.worker.on('exit', (code) => {
        const error = this.failure ?? new Error(`read pool: a thread exited with code ${code}`);
        for (const pending of this.pending.values()) pending.reject(error);
        this.pending.clear();
        reject(error);
        onExit();
      });
    });
    // The first statement awaits `started`; a failed start is reported there.
    this.started.catch(() => undefined);
  }

  async run(id: number, statement: ReadStatement): Promise<unknown[]> {
    this.load++;
    try {
      // Posted in this same tick when the thread is up, so the caller's next synchronous
      // work (the lexical search) already overlaps with the scan.
      if (!this.ready) await this.started;
      return await new Promise((resolve, reject) => {
        this.pending.set(id, { resolve, reject });
        this.worker.ref();
        this.worker.postMessage({ id, sql: statement.sql, params: statement.params });
      });
    } finally {
      this.load--;
    }
  }

  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}

export class SqliteReadPool {
  private threads: ReadThread[] = [];
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly path: string,
    /** Threads, i.e. how many statements of a batch run at the same time. */
    readonly size: number,
    private readonly pragmas: readonly string[],
  ) {}

  /** Runs the statements in parallel over the threads; rows per statement, in order. */
  async all(statements: readonly ReadStatement[]): Promise<unknown[][]> {
    if (this.closed) throw new Error('read pool: the store is closed');
    this.start();
    return Promise.all(
      statements.map((statement) => this.leastBusy().run(this.nextId++, statement)),
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    const threads = this.threads;
    this.threads = [];
    await Promise.all(threads.map((thread) => thread.stop()));
  }

  private start(): void {
    while (this.threads.length < this.size) {
      const thread: ReadThread = new ReadThread(this.path, this.pragmas, () => {
        // A thread that died is replaced on the next read.
        this.threads = this.threads.filter((other) => other !== thread);
      });
      this.threads.push(thread);
    }
  }

  private leastBusy(): ReadThread {
    let best = this.threads[0] as ReadThread;
    for (const thread of this.threads) {
      if (thread.load < best.load) best = thread;
    }
    return best;
  }
}
