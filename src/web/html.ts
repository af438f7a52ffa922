// HTML to readable text: the <title>, then the visible text with script, style,
// navigation and other non-content blocks dropped, tags removed and whitespace
// collapsed. Tokenising and character references (the full HTML5 table, numeric
// references with the C1 range read as windows-1252) are htmlparser2's. Good enough for
// a model to read a page; it is not a renderer.

import { Parser } from 'htmlparser2';

const DROPPED_BLOCKS = new Set([
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
]);
const BLOCK_TAGS = new Set([
  'p',
  'div',
  'br',
  'li',
  'ul',
  'ol',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'tr',
  'table',
  'section',
  'article',
  'header',
  'footer',
  'main',
  'aside',
  'blockquote',
  'pre',
  'hr',
  'dd',
  'dt',
  'dl',
]);

function collapse(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/[ \t\f\v\r\u00a0]+/g, ' ').trim())
    .filter((line, index, lines) => line !== '' || (index > 0 && lines[index - 1] !== ''))
    .join('\n')
    .trim();
}

export function htmlToText(html: string): { title: string | null; text: string } {
  let title: string | null = null;
  let titleText: string | null = null;
  let dropped = 0;
  const parts: string[] = [];
  const parser = new Parser(
    {
      onopentag(name) {
        if (name === 'title' && title === null) titleText = '';
        if (DROPPED_BLOCKS.has(name)) dropped += 1;
        parts.push(BLOCK_TAGS.has(name) ? '\n' : ' ');
      },
      ontext(text) {
        if (titleText !== null) titleText += text;
        else if (dropped === 0) parts.push(text);
      },
      onclosetag(name, isImplied) {
        if (name === 'title' && titleText !== null) {
          title = collapse(titleText.replace(/\s+/g, ' '));
          titleText = null;
        }
        // An unclosed block (truncated page) stays dropped to the end.
        if (DROPPED_BLOCKS.has(name) && dropped > 0) dropped -= 1;
        // A close the page did not write (`<li>one<li>two`, `<br>`) adds no break of its own.
        if (!isImplied) parts.push(BLOCK_TAGS.has(name) ? '\n' : ' ');
      },
    },
    { decodeEntities: true },
  );
  parser.end(html);
  return { title: title === '' ? null : title, text: collapse(parts.join('')) };
}
