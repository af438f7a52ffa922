// Reads a text/event-stream body into messages: the framing is eventsource-parser's;
// this only maps its messages to keel's shape (`event` defaults to "message", a missing
// `id` is null). Shared by the typed client and the CLI.

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
