/**
 * A worker's DNS cap follows the names it checks at once: with a fixed cap of 64 queries in flight,
 * one worker stayed at 25 checks/s at 64, 128 or 256 names at once against 50 ms answers
 * (docs/scale.md).
 */
import { DEFAULT_MAX_OUTSTANDING_QUERIES } from '@spoof-checker/engine';
import { describe, expect, it } from 'vitest';
import { MAX_WORKER_CONCURRENCY, WORKER_QUERIES_IN_FLIGHT_PER_NAME, workerQueriesInFlight } from '../../src/cli/worker.js';

describe('workerQueriesInFlight', () => {
  it.each([
    [1, DEFAULT_MAX_OUTSTANDING_QUERIES],
    [32, DEFAULT_MAX_OUTSTANDING_QUERIES],
    [64, 64 * WORKER_QUERIES_IN_FLIGHT_PER_NAME],
    [256, 256 * WORKER_QUERIES_IN_FLIGHT_PER_NAME],
    [MAX_WORKER_CONCURRENCY, MAX_WORKER_CONCURRENCY * WORKER_QUERIES_IN_FLIGHT_PER_NAME],
  ])('%i names at once keep %i queries in flight', (names, queries) => {
    expect(workerQueriesInFlight(names)).toBe(queries);
  });

  it('never caps a worker below the names it checks at once', () => {
    for (let names = 1; names <= MAX_WORKER_CONCURRENCY; names *= 2) expect(workerQueriesInFlight(names)).toBeGreaterThanOrEqual(names);
  });
});
