// Byte budget for list pages: large items × page size must not grow the process by
// gigabytes. A page whose items' JSON passes `budgetBytes` is fetched again with the
// number of items that fit (at least one), so the store hands out its own keyset cursor
// for the shorter page and the caller pages on from there; nothing is skipped.

interface ListPage<T> {
  items: T[];
  next_cursor: string | null;
}

/** How many leading items fit in `budgetBytes` of JSON (at least one). */
function itemsWithinBudget(items: readonly unknown[], budgetBytes: number): number {
  let bytes = 0;
  for (let index = 0; index < items.length; index += 1) {
    bytes += Buffer.byteLength(JSON.stringify(items[index]) ?? '', 'utf8') + 1;
    if (bytes > budgetBytes) return Math.max(1, index);
  }
  return items.length;
}

/** `fetch(limit)` must return the same first items for a smaller limit (keyset paging). */
async function pageWithinBudget<T>(
  fetch: (limit: number) => Promise<ListPage<T>>,
  limit: number,
  budgetBytes: number,
): Promise<ListPage<T>> {
  const page = await fetch(limit);
  const fits = itemsWithinBudget(page.items, budgetBytes);
  return fits === page.items.length ? page : fetch(fits);
}

/** The paging half of a list route's query string. */
interface PageQuery {
  limit: number;
  cursor?: string | undefined;
}

type ListPager = <T>(
  query: PageQuery,
  fetch: (limit: number, cursor: string | undefined) => Promise<ListPage<T>>,
) => Promise<ListPage<T>>;

/** A list route's pager: the query's limit and keyset cursor, within `budgetBytes`. */
export function listPager(budgetBytes: number): ListPager {
  return (query, fetch) =>
    pageWithinBudget((limit) => fetch(limit, query.cursor), query.limit, budgetBytes);
}
