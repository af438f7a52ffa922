// Reads keel's own event stream (GET …/runs/:id/events) from a fetch body: the
// text/event-stream framing is eventsource-parser's; this only maps its messages to
// keel's shape (`event` defaults to "message", a missing `id` is null).

import { EventSourceParserStream } from 'eventsource-parser/stream';

export interface SseEvent {
  id: string | null;
  event: string;
  data: string;
}

export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(new EventSourceParserStream())
    .getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield { id: value.id ?? null, event: value.event ?? 'message', data: value.data };
    }
  } finally {
    // A consumer that stops early (a terminal event) must not leave the body open.
    await reader.cancel();
  }
}
