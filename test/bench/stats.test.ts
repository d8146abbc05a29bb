import { describe, expect, it } from 'vitest';
import { alternateInterleaved, forCpuMs, interleavedCpuRates, pairedRatio, threadCpuSeconds } from '../../bench/stats.js';

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

/** Spins until the main thread has spent `ms` more milliseconds of CPU. */
function spin(ms: number): Promise<void> {
  const end = threadCpuSeconds() + ms / 1000;
  while (threadCpuSeconds() < end);
  return Promise.resolve();
}

describe('CPU-time runs (bench/stats.ts)', () => {
  it('forCpuMs runs until the main thread has spent that much CPU', async () => {
    const before = threadCpuSeconds();
    let calls = 0;
    await forCpuMs(60, () => {
      calls++;
      return spin(5);
    });
    expect(threadCpuSeconds() - before).toBeGreaterThanOrEqual(0.06);
    expect(calls).toBeGreaterThan(1);
  });

  it('interleavedCpuRates takes turns pass by pass and rates each side by its own CPU time', async () => {
    const order: string[] = [];
    // a: 10 units per pass of at least 4 ms; b: 1 unit per pass of at least 2 ms.
    const rates = await interleavedCpuRates(
      40,
      { batch: 10, once: () => (order.push('a'), spin(4)) },
      { batch: 1, once: () => (order.push('b'), spin(2)) },
    );
    expect(order.slice(0, 4)).toEqual(['a', 'b', 'a', 'b']);
    // Each side ran until its own 40 ms: b, twice as fast a pass, ran more passes.
    expect(order.filter((side) => side === 'b').length).toBeGreaterThan(order.filter((side) => side === 'a').length);
    expect(rates.a).toBeLessThanOrEqual(10 / 0.004);
    expect(rates.b).toBeLessThanOrEqual(1 / 0.002);
    // a's rate is its own: ten units a pass against one, in twice b's time a pass at most.
    expect(rates.a).toBeGreaterThan(rates.b);
  });

  it('alternateInterleaved lets each side start in turn', async () => {
    const order: string[] = [];
    // Each pass spends the whole run's CPU: a run is one pass of each side.
    const rates = await alternateInterleaved(
      2,
      1,
      { batch: 1, once: () => (order.push('a'), spin(1)) },
      { batch: 1, once: () => (order.push('b'), spin(1)) },
    );
    expect(order).toEqual(['a', 'b', 'b', 'a']);
    expect(rates.a).toHaveLength(2);
    expect(rates.b).toHaveLength(2);
  });
});
