// A response body read under the size cap. keel asks for `identity`, but servers may
// compress anyway; gzip, deflate and br are then decoded and the cap counts DECODED
// bytes, so a small compressed body cannot expand past it (a zip bomb stops at the cap,
// whatever it would expand to). The bytes on the wire are capped as well, so input that
// decodes to little or nothing cannot stream on. Reading stops the moment a cap is
// reached: the body stream is destroyed and the caller closes the connection.

import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  constants,
  createBrotliDecompress,
  createGunzip,
  createInflate,
  createInflateRaw,
} from 'node:zlib';
import { WebError } from './errors.ts';

export interface CappedBody {
  bytes: Buffer;
  /** A cap was reached: there was more than what `bytes` holds. */
  truncated: boolean;
}

export interface BodyDecoding {
  coding: string;
  /** The decoder, chosen once the first bytes are seen (deflate comes in two framings). */
  decoderFor(firstChunk: Buffer): Transform;
}

// A body cut at the wire cap is an unfinished stream: flush what decodes, do not fail.
const ZLIB_OPTIONS = { finishFlush: constants.Z_SYNC_FLUSH };

/** How to decode a Content-Encoding; null for none. Refuses what keel cannot decode. */
export function bodyDecoding(header: string | string[] | undefined): BodyDecoding | null {
  const codings = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  const [coding] = codings;
  if (coding === undefined) return null;
  const refuse = (): never => {
    throw new WebError(
      'WEB_CONTENT_TYPE',
      `content encoding ${codings.join(', ')} is not supported`,
    );
  };
  if (codings.length > 1) return refuse();
  switch (coding) {
    case 'gzip':
    case 'x-gzip':
      return { coding, decoderFor: () => createGunzip(ZLIB_OPTIONS) };
    case 'deflate':
      // RFC 9110's deflate is zlib-wrapped, yet many servers send raw deflate; the low
      // nibble of a zlib header's first byte is 8 (what browsers check too).
      return {
        coding,
        decoderFor: (first) =>
          ((first[0] ?? 0) & 0x0f) === 0x08
            ? createInflate(ZLIB_OPTIONS)
            : createInflateRaw(ZLIB_OPTIONS),
      };
    case 'br':
      return {
        coding,
        decoderFor: () => createBrotliDecompress({ finishFlush: constants.BROTLI_OPERATION_FLUSH }),
      };
    default:
      return refuse();
  }
}

interface WireState {
  cut: boolean;
  /** What the body stream itself threw (a timeout, a reset), as opposed to a decoder. */
  error: unknown;
}

async function* wireChunks(body: Readable, maxBytes: number, wire: WireState) {
  let total = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      const room = maxBytes - total;
      if (chunk.length > room) {
        wire.cut = true;
        if (room > 0) yield chunk.subarray(0, room);
        // Leaving the loop ends the iteration, which destroys the body stream.
        return;
      }
      total += chunk.length;
      yield chunk;
    }
  } catch (error) {
    wire.error = error;
    throw error;
  }
}

async function* prepend(first: Buffer, rest: AsyncIterable<Buffer>) {
  yield first;
  yield* rest;
}

export async function readCapped(
  body: Readable,
  decoding: BodyDecoding | null,
  maxBytes: number,
): Promise<CappedBody> {
  const wire: WireState = { cut: false, error: undefined };
  const chunks = wireChunks(body, maxBytes, wire);
  const first = await chunks.next();
  if (first.done) return { bytes: Buffer.alloc(0), truncated: false };

  const kept: Buffer[] = [];
  let length = 0;
  let over = false;
  const collect = async (source: AsyncIterable<Buffer>): Promise<void> => {
    for await (const chunk of source) {
      const room = maxBytes - length;
      kept.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
      length += Math.min(chunk.length, room);
      if (chunk.length > room) {
        over = true;
        return;
      }
    }
  };
  const source = prepend(first.value, chunks);
  try {
    if (decoding) await pipeline(source, decoding.decoderFor(first.value), collect);
    else await collect(source);
  } catch (error) {
    // Stopping at the cap tears the pipeline down: that abort is ours, not a failure.
    if (!over) {
      if (!decoding || error === wire.error) throw error;
      throw new WebError(
        'WEB_FETCH_FAILED',
        `the ${decoding.coding} body cannot be decoded: ${(error as Error).message}`,
      );
    }
  }
  return { bytes: Buffer.concat(kept, length), truncated: over || wire.cut };
}
