// A keel WebAssembly tool in AssemblyScript (docs/wasm-tools.md): counts the words and
// characters of `arguments.text`. It reads the envelope {"arguments": {...},
// "idempotency_key": "..."} from stdin, parses it as JSON, and writes one JSON value to
// stdout. Build (from the repository root):
//
//   npx asc examples/wasm-tools/words.ts \
//     --config node_modules/@assemblyscript/wasi-shim/asconfig.json \
//     -O3 --noAssert -o examples/wasm-tools/words.wasm
//
// Register it:
//
//   npx keel wasm put words --module examples/wasm-tools/words.wasm --effect read_only \
//     --description "Counts the words of a text" --schema examples/wasm-tools/words.schema.json

/** A small JSON reader: enough to walk objects and read strings and skip any value. */
class Json {
  at: i32 = 0;
  constructor(public text: string) {}

  space(): void {
    while (this.at < this.text.length) {
      const c = this.text.charCodeAt(this.at);
      if (c != 0x20 && c != 0x0a && c != 0x0d && c != 0x09) break;
      this.at++;
    }
  }

  expect(c: i32): void {
    this.space();
    if (this.text.charCodeAt(this.at) != c) {
      throw new Error('invalid JSON at ' + this.at.toString());
    }
    this.at++;
  }

  peek(): i32 {
    this.space();
    return this.text.charCodeAt(this.at);
  }

  string(): string {
    this.expect(0x22);
    let out = '';
    while (this.at < this.text.length) {
      const c = this.text.charCodeAt(this.at++);
      if (c == 0x22) return out;
      if (c != 0x5c) {
        out += String.fromCharCode(c);
        continue;
      }
      const e = this.text.charCodeAt(this.at++);
      if (e == 0x6e) out += '\n';
      else if (e == 0x74) out += '\t';
      else if (e == 0x72) out += '\r';
      else if (e == 0x62) out += '\b';
      else if (e == 0x66) out += '\f';
      else if (e == 0x75) {
        out += String.fromCharCode(<i32>parseInt(this.text.substr(this.at, 4), 16));
        this.at += 4;
      } else out += String.fromCharCode(e);
    }
    throw new Error('unterminated string');
  }

  /** Skips one value of any kind. */
  skip(): void {
    const c = this.peek();
    if (c == 0x22) {
      this.string();
    } else if (c == 0x7b || c == 0x5b) {
      const close = c == 0x7b ? 0x7d : 0x5d;
      this.at++;
      if (this.peek() == close) {
        this.at++;
        return;
      }
      while (true) {
        if (close == 0x7d) {
          this.string();
          this.expect(0x3a);
        }
        this.skip();
        if (this.peek() == 0x2c) {
          this.at++;
          continue;
        }
        this.expect(close);
        return;
      }
    } else {
      // A number, true, false or null.
      while (this.at < this.text.length) {
        const d = this.text.charCodeAt(this.at);
        if (d == 0x2c || d == 0x7d || d == 0x5d || d == 0x20 || d == 0x0a) break;
        this.at++;
      }
    }
  }

  /** In the object starting here, moves to the value of `key`; false when absent. */
  find(key: string): bool {
    this.expect(0x7b);
    if (this.peek() == 0x7d) return false;
    while (true) {
      const name = this.string();
      this.expect(0x3a);
      if (name == key) return true;
      this.skip();
      if (this.peek() != 0x2c) return false;
      this.at++;
    }
  }
}

function readStdin(): string {
  const chunks = new Array<ArrayBuffer>();
  let total = 0;
  while (true) {
    const chunk = new ArrayBuffer(4096);
    const read = process.stdin.read(chunk);
    if (read <= 0) break;
    chunks.push(chunk.slice(0, read));
    total += read;
  }
  const all = new Uint8Array(total);
  let offset = 0;
  for (let i = 0; i < chunks.length; i++) {
    all.set(Uint8Array.wrap(chunks[i]), offset);
    offset += chunks[i].byteLength;
  }
  return String.UTF8.decode(all.buffer);
}

const envelope = new Json(readStdin());
if (!envelope.find('arguments') || !envelope.find('text') || envelope.peek() != 0x22) {
  process.stderr.write('arguments.text (a string) is required\n');
  process.exit(2);
}
const text = envelope.string();
let words = 0;
let inWord = false;
for (let i = 0; i < text.length; i++) {
  const c = text.charCodeAt(i);
  const space = c == 0x20 || c == 0x0a || c == 0x0d || c == 0x09;
  if (!space && !inWord) words++;
  inWord = !space;
}
process.stdout.write(
  '{"words":' + words.toString() + ',"characters":' + text.length.toString() + '}',
);
