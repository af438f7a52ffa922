// One JSON request to a keel server over real HTTP, as the API tests make it: the body
// (when there is one) sent as JSON with its content type, the answer's text kept for
// assertion messages and parsed when it is not empty.

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Loose = any;

export interface JsonAnswer {
  status: number;
  text: string;
  body: Loose;
}

export async function requestJson(
  base: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<JsonAnswer> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, text, body: text ? (JSON.parse(text) as Loose) : null };
}
