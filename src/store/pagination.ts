/** What the memory stores share: the spec's pagination and order, copies, and tenancy. */
import type { Page, PageRequest } from './page-types.js';

/**
 * One page of `rows` (already filtered and ordered) by the spec's offset pagination: `page` counts
 * from 1 and a page past the end is empty, with `total` still the number of matching rows
 * (spec: Pagination rules 1–5).
 */
export function paginate<T>(rows: readonly T[], request: PageRequest): Page<T> {
  const offset = (request.page - 1) * request.limit;
  return { items: rows.slice(offset, offset + request.limit), total: rows.length };
}

/** Newest first by `createdAt` (ISO 8601 strings in UTC compare as dates), ties by id for a stable order. */
export function newestFirst<T extends { createdAt: string; id: string }>(a: T, b: T): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/**
 * A deep copy: every memory store returns and keeps copies, so a caller that edits what it got (or
 * what it gave) cannot edit the store behind it.
 */
export const copy = <T>(value: T): T => structuredClone(value);

/**
 * `item` when there is one and it is `organizationId`'s (with no organisation given, any item):
 * an id of another organisation is not found.
 */
export function owned<T extends { organizationId: string }>(item: T | undefined, organizationId?: string): T | undefined {
  return item !== undefined && (organizationId === undefined || item.organizationId === organizationId) ? item : undefined;
}

/** The items of `organizationId` among `items`, in their order. */
export function ownedBy<T extends { organizationId: string }>(items: Iterable<T>, organizationId: string): T[] {
  return [...items].filter((item) => item.organizationId === organizationId);
}

/** A copy of `item` when it is `organizationId`'s (as {@link owned}), otherwise undefined. */
export function ownedCopy<T extends { organizationId: string }>(item: T | undefined, organizationId?: string): T | undefined {
  const found = owned(item, organizationId);
  return found && copy(found);
}
