// Assertions several test files share.

import assert from 'node:assert/strict';

/** Awaits `promise`, asserts it rejects with a KeelError of `code`, returns the error. */
export async function rejectsCode(promise: Promise<unknown>, code: string): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    assert.equal((error as { code?: string }).code, code, (error as Error).message);
    return error as Error;
  }
  throw new Error(`expected ${code}`);
}
