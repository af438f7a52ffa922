// One bound on how deeply nested parsed user input may be. Every later step (zod,
// fingerprints, JSON.stringify, storage) walks values recursively, so an input nested a
// few thousand levels would overflow the stack there; it is refused here, naming where.
// The walk itself is iterative, so it cannot overflow however deep the value is.

/** The default bound: far beyond any real agent document, tool argument or body. */
export const MAX_NESTING_DEPTH = 64;

/** How many path segments a problem names before eliding the rest. */
const SHOWN_SEGMENTS = 6;

export interface NestingProblem {
  /** `root.a.b[0]…`: where the value first goes past the bound. */
  path: string;
  message: string;
}

function pathText(root: string, segments: (string | number)[]): string {
  const shown = segments
    .slice(0, SHOWN_SEGMENTS)
    .map((segment) => (typeof segment === 'number' ? `[${segment}]` : `.${segment}`));
  return `${root}${shown.join('')}${segments.length > SHOWN_SEGMENTS ? '…' : ''}`;
}

/**
 * null when `value` (objects and arrays, any prototype) is nested at most `maxDepth`
 * levels; a top-level object is depth 1. `root` names the field in the message.
 */
export function nestingProblem(
  value: unknown,
  root: string,
  maxDepth: number = MAX_NESTING_DEPTH,
): NestingProblem | null {
  const stack: { value: unknown; segments: (string | number)[] }[] = [{ value, segments: [] }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (item.value === null || typeof item.value !== 'object') continue;
    if (item.segments.length >= maxDepth) {
      const path = pathText(root, item.segments);
      return { path, message: `${path}: nested deeper than ${maxDepth} levels` };
    }
    const entries: [string | number, unknown][] = Array.isArray(item.value)
      ? item.value.map((inner, index): [number, unknown] => [index, inner])
      : Object.entries(item.value);
    for (const [key, inner] of entries)
      stack.push({ value: inner, segments: [...item.segments, key] });
  }
  return null;
}
