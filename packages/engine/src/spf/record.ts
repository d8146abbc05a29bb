/**
 * Finding a domain's SPF record (RFC 7208 §4.4, §4.5): one TXT query, the character-strings of
 * each record joined, and only records that start with "v=spf1" kept. Shared by the evaluator and
 * the analyzer so both read DNS the same way.
 */
import { thenNow, type DnsAnswer, type DnsErrorReason, type Now, type Resolver } from '../dns/types.js';
import { isSpfRecordText } from './parse.js';
import { safeResolve } from './resolve.js';

/** What the TXT lookup at a name says about its SPF record. */
export type SpfRecordLookup =
  | { status: 'found'; text: string }
  /** No SPF record: the name does not exist, has no TXT, or none of its TXT records is SPF. */
  | { status: 'none'; why: 'nxdomain' | 'nodata' | 'no-spf' | 'invalid-name' }
  /** RFC 7208 §4.5: more than one SPF record is a permerror. */
  | { status: 'multiple'; records: string[] }
  /** RFC 7208 §4.4: a DNS failure on this lookup is a temperror, never "none". */
  | { status: 'temperror'; reason: DnsErrorReason; detail?: string };

/**
 * RFC 7208 §4.6.4: whether the TXT query behind a lookup was void (NXDOMAIN, or NOERROR with no
 * answers). A name whose TXT records are all something else answered, so it is not void.
 */
export function isVoidSpfLookup(lookup: SpfRecordLookup): boolean {
  return lookup.status === 'none' && (lookup.why === 'nxdomain' || lookup.why === 'nodata');
}

/** RFC 7208 §3.3: a record's character-strings are concatenated with nothing between them. */
export function joinTxt(strings: readonly string[]): string {
  return strings.length === 1 ? strings[0]! : strings.join('');
}

/**
 * The joined text of every TXT record that is an SPF record (RFC 7208 §4.5), sorted by code point:
 * an RRset has no order (RFC 2181 §5), so with several records the same DNS data must give the same
 * `rawRecord` and the same permerror text whatever order the answer lists them in.
 */
export function selectSpfRecords(records: readonly (readonly string[])[]): string[] {
  const selected: string[] = [];
  for (const strings of records) {
    const text = joinTxt(strings);
    if (isSpfRecordText(text)) selected.push(text);
  }
  if (selected.length > 1) selected.sort((left, right) => (left < right ? -1 : left > right ? 1 : 0));
  return selected;
}

/** Looks up the SPF record published at `name` (RFC 7208 §4.4, §4.5). Never throws. */
export async function lookupSpfRecord(resolver: Resolver, name: string): Promise<SpfRecordLookup> {
  return lookupSpfRecordNow(resolver, name);
}

/**
 * `lookupSpfRecord`, as a value when the resolver holds the answer (`resolveNow`) and a promise only
 * when it must wait: the walks call it for every include, and a warm check waits on none of them.
 */
export function lookupSpfRecordNow(resolver: Resolver, name: string): Now<SpfRecordLookup> {
  return thenNow(safeResolve(resolver, name, 'TXT'), readSpfAnswer);
}

function readSpfAnswer(answer: DnsAnswer<'TXT'>): SpfRecordLookup {
  switch (answer.kind) {
    case 'error':
      // A name no query can carry cannot hold a record; every other error is a temperror.
      if (answer.reason === 'invalid-name') return { status: 'none', why: 'invalid-name' };
      return answer.detail === undefined
        ? { status: 'temperror', reason: answer.reason }
        : { status: 'temperror', reason: answer.reason, detail: answer.detail };
    case 'nxdomain':
      return { status: 'none', why: 'nxdomain' };
    case 'nodata':
      return { status: 'none', why: 'nodata' };
    case 'records': {
      const selected = selectSpfRecords(answer.records);
      if (selected.length === 0) return { status: 'none', why: 'no-spf' };
      if (selected.length > 1) return { status: 'multiple', records: selected };
      return { status: 'found', text: selected[0]! };
    }
  }
}
