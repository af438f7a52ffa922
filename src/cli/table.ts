// How the CLI prints lists: aligned columns for people by default, the API's JSON for
// scripts (`--json`), and a sentence instead of nothing when the list is empty.

export interface Column {
  title: string;
  /** The cell; objects and arrays are shown as compact JSON. */
  value: (item: Record<string, unknown>) => unknown;
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '-';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Columns padded to their widest cell; the last one is not padded. */
export function formatTable(items: Record<string, unknown>[], columns: Column[]): string {
  const rows = [
    columns.map((column) => column.title),
    ...items.map((item) => columns.map((column) => cell(column.value(item)))),
  ];
  const widths = columns.map((_, index) => Math.max(...rows.map((row) => row[index]?.length ?? 0)));
  return rows
    .map((row) =>
      row
        .map((text, index) => (index === row.length - 1 ? text : text.padEnd(widths[index] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** A page of a list: JSON as the API sent it, or the table (or `empty`) and a paging hint. */
export function printList(
  print: (text: string) => void,
  page: { items: Record<string, unknown>[]; next_cursor?: unknown; raw: unknown },
  options: { json: boolean; columns: Column[]; empty: string },
): void {
  if (options.json) {
    print(`${JSON.stringify(page.raw, null, 2)}\n`);
    return;
  }
  print(
    page.items.length === 0
      ? `${options.empty}\n`
      : `${formatTable(page.items, options.columns)}\n`,
  );
  if (typeof page.next_cursor === 'string' && page.next_cursor)
    print(`(more: add --cursor ${page.next_cursor})\n`);
}
