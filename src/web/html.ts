// HTML to readable text, without a DOM: the <title>, then the visible text with
// script, style, navigation and other non-content blocks dropped, tags removed,
// entities decoded and whitespace collapsed. Good enough for a model to read a page;
// it is not a renderer.

import { WINDOWS_1252_HIGH } from './charset.ts';
import { NAMED_CHARACTERS } from './entities.ts';

const DROPPED_BLOCKS = [
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'canvas',
  'nav',
  'head',
  'iframe',
  'object',
];
const BLOCK_TAGS =
  /<\/?(p|div|br|li|ul|ol|h[1-6]|tr|table|section|article|header|footer|main|aside|blockquote|pre|hr|dd|dt|dl)\b[^>]*>/gi;

/** What a numeric reference means in HTML: the C1 range is read as windows-1252. */
function numericReference(code: number): string {
  if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return '\ufffd';
  if (code >= 0x80 && code <= 0x9f) return WINDOWS_1252_HIGH[code - 0x80] ?? '\ufffd';
  return String.fromCodePoint(code);
}

export function decodeEntities(text: string): string {
  return text.replace(
    /&(#[xX][0-9a-fA-F]{1,6}|#\d{1,7}|[A-Za-z][A-Za-z0-9]{1,31});/g,
    (whole, entity: string) => {
      if (entity.startsWith('#')) {
        const hex = entity[1] === 'x' || entity[1] === 'X';
        return numericReference(hex ? parseInt(entity.slice(2), 16) : Number(entity.slice(1)));
      }
      return NAMED_CHARACTERS.get(entity) ?? whole;
    },
  );
}

function collapse(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/[ \t\f\v\r\u00a0]+/g, ' ').trim())
    .filter((line, index, lines) => line !== '' || (index > 0 && lines[index - 1] !== ''))
    .join('\n')
    .trim();
}

export function htmlToText(html: string): { title: string | null; text: string } {
  const titleMatch = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/i.exec(html);
  const title = titleMatch
    ? collapse(decodeEntities(titleMatch[1] ?? '').replace(/\s+/g, ' '))
    : null;
  let body = html.replace(/<!--[\s\S]*?-->/g, ' ');
  for (const tag of DROPPED_BLOCKS) {
    body = body.replace(new RegExp(`<${tag}\\b[^>]*>[\\s\\S]*?<\\/${tag}\\s*>`, 'gi'), ' ');
    // An unclosed block (truncated page) is dropped to the end.
    body = body.replace(new RegExp(`<${tag}\\b[^>]*>[\\s\\S]*$`, 'i'), ' ');
  }
  body = body.replace(BLOCK_TAGS, '\n').replace(/<[^>]*>/g, ' ');
  return { title: title === '' ? null : title, text: collapse(decodeEntities(body)) };
}
