/**
 * Runs `task` over `items` with at most `limit` in flight; the results keep the order of `items`.
 * Used wherever a list fans out (DKIM selectors, MX hosts, zone files) so that the fan-out is bounded.
 */
export async function mapBounded<T, R>(items: readonly T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  // Everything fits in one wave: start all at once (no worker loop, one await per item less).
  if (items.length <= limit) return Promise.all(items.map(task));
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
