// Reads keel's own event stream (GET …/runs/:id/events) from a fetch body: splits the
// text/event-stream framing into messages (`id`, `event`, `data`; comments ignored).
// Small on purpose — it only needs to read what src/api/sse.ts writes.

export interface SseEvent {
  id: string | null;
  event: string;
  data: string;
}

export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let current: SseEvent = { id: null, event: 'message', data: '' };
  let hasData = false;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = buffer.search(/\r?\n/)) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer[newline] === '\r' ? 2 : 1));
      if (line === '') {
        if (hasData) yield current;
        current = { id: null, event: 'message', data: '' };
        hasData = false;
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') current.id = value;
      else if (field === 'event') current.event = value;
      else if (field === 'data') {
        current.data = hasData ? `${current.data}\n${value}` : value;
        hasData = true;
      }
    }
  }
}
