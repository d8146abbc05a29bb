/** Reading a batch's result rows back, page by page, for the results stream and `scan --redis`. */
import type { BatchStore } from '../../store/batches.js';
import type { BatchResultRow } from './model.js';

/** Result rows read from the store per round trip. */
export const RESULTS_PAGE_SIZE = 500;

/**
 * The stored rows after `after`, one page at a time (never the whole batch in memory). With
 * `contiguousOnly` (a batch still running) it stops at the first gap: a later row may be written
 * before an earlier one, and a reader that resumed after it would never see the earlier one.
 */
export async function* resultPages(
  store: BatchStore,
  organizationId: string,
  batchId: string,
  after: number,
  contiguousOnly: boolean,
  pageSize = RESULTS_PAGE_SIZE,
): AsyncGenerator<BatchResultRow[]> {
  let last = after;
  for (;;) {
    const rows = await store.readResults(organizationId, batchId, last, pageSize);
    let take = rows.length;
    if (contiguousOnly) {
      take = 0;
      while (take < rows.length && rows[take]!.seq === last + 1 + take) take++;
    }
    if (take > 0) {
      const page = take === rows.length ? rows : rows.slice(0, take);
      last = page[page.length - 1]!.seq;
      yield page;
    }
    if (take < rows.length || rows.length < pageSize) return;
  }
}
