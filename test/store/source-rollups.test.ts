/**
 * The store's roll-up of a source's rows (src/store/reports.ts `sourceRollups`) adds up their rests
 * in the engine's own tally shape (`SenderRests`, exported by @spoof-checker/engine): one type for
 * both, covering every field of a digest entry that is not summed in a column, and the roll-up equals
 * folding the engine's `mergeDigestEntries` over the same entries.
 */
import { emptySenderRests, mergeDigestEntries, type SenderDigestEntry, type SenderRests } from '@spoof-checker/engine';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { emptyDigestEntry, sourceRollups, type SourceWindowPart } from '../../src/store/reports.js';

/** The fields of a digest entry the store sums in columns (or dates), not in the rests. */
type Summed = 'day' | 'source' | 'messages' | 'spfAligned' | 'dkimAligned' | 'dmarcPass' | 'failing';

describe('sourceRollups', () => {
  it("tallies in the engine's SenderRests, which holds every field of a digest entry the columns do not", () => {
    expectTypeOf<keyof SenderRests>().toEqualTypeOf<Exclude<keyof SenderDigestEntry, Summed>>();
    expect(Object.keys(emptySenderRests()).sort()).toEqual(Object.keys(emptyDigestEntry('x', '2025-01-01')).filter((k) => !['day', 'source', 'messages', 'spfAligned', 'dkimAligned', 'dmarcPass', 'failing'].includes(k)).sort());
  });

  it('equals folding mergeDigestEntries over the entries, each rest counted `times` times', () => {
    const a: SenderDigestEntry = { ...emptyDigestEntry('192.0.2.1', '2025-01-01'), messages: 3, forwardedFailing: 1, selectors: ['s2', 's1'], verified: ['a.example s1'], ownFailed: [['a.example s9', 'fail']], broken: [['a.example s9', 2]], unalignedSpfPass: 'm.example', ownSpfFailed: 'softfail' };
    const b: SenderDigestEntry = { ...emptyDigestEntry('192.0.2.1', '2025-01-02'), messages: 5, forwardedFailing: 2, selectors: ['s3'], dkimDomains: ['x.example'], ownFailed: [['a.example s9', 'neutral']], broken: [['a.example s9', 1]], brokenNoSelector: 4, ownFailedNoSelector: true, unalignedSpfPass: 'l.example' };
    const restOf = (e: SenderDigestEntry): Partial<SenderDigestEntry> => {
      const { day: _d, source: _s, messages: _m, spfAligned: _sa, dkimAligned: _da, dmarcPass: _p, failing: _f, ...rest } = e;
      return rest;
    };
    // b's rest twice (two days with equal rests), a's once.
    const parts: SourceWindowPart[] = [
      { source: '192.0.2.1', rest: restOf(a), times: 1 },
      { source: '192.0.2.1', rest: restOf(b), times: 2 },
    ];
    const [rollup] = sourceRollups([{ source: '192.0.2.1', firstDay: '2025-01-01', lastDay: '2025-01-03', messages: 13, dmarcPass: 0, spfAligned: 0, dkimAligned: 0, failing: 0 }], parts);
    const folded = mergeDigestEntries(mergeDigestEntries(a, b), { ...b, day: '2025-01-03' });
    expect(rollup!.entry).toEqual({ ...folded, day: '2025-01-01', selectors: [...folded.selectors].sort() });
    expect(rollup!.lastDay).toBe('2025-01-03');
  });
});
