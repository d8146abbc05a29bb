/**
 * The heap growing factor `scan` and `reports import` set (src/cli/heap-growth.ts): set unless node
 * was started with one of its own, in either spelling V8 takes.
 */
import { describe, expect, it } from 'vitest';
import { heapGrowthFlag } from '../../src/cli/heap-growth.js';

describe('heapGrowthFlag', () => {
  it('sets the percentage asked for when node was started without one', () => {
    expect(heapGrowthFlag([], 50)).toBe('--heap-growing-percent=50');
    expect(heapGrowthFlag(['--expose-gc', '--max-old-space-size=512'], 30)).toBe('--heap-growing-percent=30');
  });

  it("keeps node's own growing factor, in either spelling (0: V8's choice)", () => {
    expect(heapGrowthFlag(['--heap-growing-percent=0'], 50)).toBeUndefined();
    expect(heapGrowthFlag(['--expose-gc', '--heap_growing_percent=80'], 50)).toBeUndefined();
  });

  it('does not mistake a longer flag for it', () => {
    expect(heapGrowthFlag(['--heap-growing-percentage-log=1'], 50)).toBe('--heap-growing-percent=50');
  });
});
