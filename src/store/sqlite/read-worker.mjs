// One thread of the SQLite read pool (read-pool.ts): its own connection to the store's
// database file, answering read-only statements so a long read (the exact vector scan
// of memory search) runs off the event loop and on several cores at once. Plain
// JavaScript because a worker thread does not inherit the tsx loader of its parent.

import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';

const db = new Database(workerData.path, { fileMustExist: true });
sqliteVec.load(db);
for (const pragma of workerData.pragmas) db.pragma(pragma);
// Nothing this thread runs may change the database (the writer is the main connection).
db.pragma('query_only = ON');

const statements = new Map();

function prepared(sql) {
  let statement = statements.get(sql);
  if (!statement) {
    statement = db.prepare(sql);
    statements.set(sql, statement);
  }
  return statement;
}

// Structured cloning turns a Buffer into a plain Uint8Array, which better-sqlite3 does
// not bind as a blob.
function bindable(value) {
  return value instanceof Uint8Array && !Buffer.isBuffer(value)
    ? Buffer.from(value.buffer, value.byteOffset, value.byteLength)
    : value;
}

parentPort.on('message', (request) => {
  try {
    const rows = prepared(request.sql).all(...request.params.map(bindable));
    parentPort.postMessage({ id: request.id, rows });
  } catch (error) {
    parentPort.postMessage({
      id: request.id,
      error: error instanceof Error ? error.message : String(error),
    });
  }
});

parentPort.postMessage({ ready: true });
