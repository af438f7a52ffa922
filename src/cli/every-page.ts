// Lists the CLI prints whole (`keel agents list`, `mcp list`, `secrets list`, `wasm list`)
// are paged by the API: follow next_cursor and gather every item of the list's array.

/** One page: the array under `key` and the cursor of the next page, if any. */
type PageBody = Record<string, unknown> & { next_cursor?: string | null };

export async function everyItem(
  page: (cursor: string | undefined) => Promise<PageBody>,
  key: string,
): Promise<unknown[]> {
  const items: unknown[] = [];
  let cursor: string | undefined;
  do {
    const body = await page(cursor);
    items.push(...((body[key] as unknown[] | undefined) ?? []));
    cursor =
      typeof body.next_cursor === 'string' && body.next_cursor ? body.next_cursor : undefined;
  } while (cursor !== undefined);
  return items;
}
