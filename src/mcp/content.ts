// An MCP tool result → the JSON the model reads. Text stays text (parsed when it is a
// JSON document), images and blobs become their type and size (never their bytes),
// resources keep their URI and text; the whole result is capped.

import type { JsonObject, JsonValue } from '../types.ts';

export const MAX_RESULT_CHARS = 262_144;

interface ContentItem {
  type: string;
  text?: unknown;
  data?: unknown;
  mimeType?: unknown;
  uri?: unknown;
  name?: unknown;
  resource?: { uri?: unknown; mimeType?: unknown; text?: unknown; blob?: unknown };
}

function textValue(text: string): JsonValue {
  const trimmed = text.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      return JSON.parse(trimmed) as JsonValue;
    } catch {
      return text;
    }
  }
  return text;
}

function item(content: ContentItem): JsonObject {
  const str = (value: unknown) => (typeof value === 'string' ? value : null);
  switch (content.type) {
    case 'text':
      return { type: 'text', value: textValue(str(content.text) ?? '') };
    case 'image':
    case 'audio':
      return {
        type: content.type,
        mime_type: str(content.mimeType),
        base64_chars: str(content.data)?.length ?? 0,
      };
    case 'resource': {
      const resource = content.resource ?? {};
      return {
        type: 'resource',
        uri: str(resource.uri),
        mime_type: str(resource.mimeType),
        ...(typeof resource.text === 'string'
          ? { text: resource.text }
          : { base64_chars: str(resource.blob)?.length ?? 0 }),
      };
    }
    case 'resource_link':
      return { type: 'resource_link', uri: str(content.uri), name: str(content.name) };
    default:
      return { type: String(content.type) };
  }
}

/** The text of a result's content, for error messages. */
export function contentText(content: readonly ContentItem[], max = 2000): string {
  const text = content
    .map((entry) => (entry.type === 'text' && typeof entry.text === 'string' ? entry.text : ''))
    .filter(Boolean)
    .join('\n');
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export function mapToolResult(result: {
  content?: readonly ContentItem[];
  structuredContent?: unknown;
}): JsonValue {
  const content = (result.content ?? []).map(item);
  const mapped: JsonObject =
    result.structuredContent !== undefined
      ? { structured: result.structuredContent as JsonValue, content }
      : content.length === 1 && content[0]?.type === 'text'
        ? { value: content[0].value ?? null }
        : { content };
  const size = JSON.stringify(mapped).length;
  if (size <= MAX_RESULT_CHARS) return mapped;
  const text = JSON.stringify(mapped).slice(0, MAX_RESULT_CHARS / 2);
  return { truncated: true, result_chars: size, max_chars: MAX_RESULT_CHARS, head: text };
}
