// Telegram refuses messages over 4096 characters: a long answer is sent as ordered parts,
// cut at paragraph boundaries when it can, else at line ends, spaces, or hard.

export const TELEGRAM_MESSAGE_LIMIT = 4096;

export function splitMessage(text: string, limit = TELEGRAM_MESSAGE_LIMIT): string[] {
  const parts: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    const window = rest.slice(0, limit);
    let cut = window.lastIndexOf('\n\n');
    if (cut <= 0) cut = window.lastIndexOf('\n');
    if (cut <= 0) cut = window.lastIndexOf(' ');
    if (cut <= 0) cut = limit;
    // Never split a UTF-16 surrogate pair (an emoji) in two.
    const code = rest.charCodeAt(cut - 1);
    if (cut === limit && code >= 0xd800 && code <= 0xdbff) cut -= 1;
    parts.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut).replace(/^\s+/, '');
  }
  if (rest.length > 0 || parts.length === 0) parts.push(rest);
  return parts.filter((part, index) => part.length > 0 || index === 0);
}
