// Every statement text better-sqlite3 prepares while `work` runs (in this process, on
// any connection): how a test sees what SQL the store really sends.

import Database from 'better-sqlite3';

export async function preparedDuring(work: () => Promise<void>): Promise<string[]> {
  const prepared: string[] = [];
  const prototype = Database.prototype as unknown as { prepare: (sql: string) => unknown };
  const prepare = prototype.prepare;
  prototype.prepare = function (this: unknown, sql: string) {
    prepared.push(sql);
    return prepare.call(this, sql);
  };
  try {
    await work();
  } finally {
    prototype.prepare = prepare;
  }
  return prepared;
}
