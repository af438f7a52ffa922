// The run event stream reader now lives with the typed client (src/client/sse.ts).

export type { SseEvent } from '../client/sse.ts';
export { readSse } from '../client/sse.ts';
