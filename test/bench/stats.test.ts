import { describe, expect, it } from 'vitest';
import { pairedRatio } from '../../bench/stats.js';

describe('pairedRatio (bench/stats.ts)', () => {
  it('is the median of each pair’s ratio, not the median over the median', () => {
    // Load halves both sides of the last two pairs: each pair's ratio is 0.5 whatever the load.
    const engine = [100, 100, 100, 50, 50];
    const baseline = [200, 200, 200, 100, 100];
    expect(pairedRatio(engine, baseline)).toBe(0.5);
    // Medians taken apart pick different loads: 100 ÷ 100 would read 1.
    const drifted = [100, 100, 100, 50, 50];
    const drifting = [200, 200, 100, 100, 100];
    expect(pairedRatio(drifted, drifting)).toBe(0.5);
  });

  it('refuses runs that are not in pairs', () => {
    expect(() => pairedRatio([1, 2], [1])).toThrow(RangeError);
  });
});
