/** Cursor lists as async iterators: each page fetched when the previous one is used up. */

/**
 * The items of every page, in order: `fetchPage(cursor)` answers a page's items and the cursor of
 * the next page (absent on the last), starting from `first` (absent: the first page).
 */
export async function* paginate<T>(
  fetchPage: (
    cursor: string | undefined
  ) => Promise<{ readonly items: ReadonlyArray<T>; readonly next: string | undefined }>,
  first?: string
): AsyncGenerator<T, void, undefined> {
  let cursor = first
  for (;;) {
    const page = await fetchPage(cursor)
    yield* page.items
    if (page.next === undefined || page.next === cursor) return
    cursor = page.next
  }
}
