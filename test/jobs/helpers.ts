/**
 * Shared pieces of the batch tests: the fixture zones as a resolver, an app with the batch routes,
 * fake queues, and reading a results stream.
 */
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { checkDomain } from '../../packages/engine/src/check.js';
import { FaultyResolver } from '../../packages/engine/src/dns/faults.js';
import type { Resolver } from '../../packages/engine/src/dns/types.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import type { Batch } from '../../src/jobs/batches/model.js';
import type { BatchQueue, QueueReadiness } from '../../src/jobs/batches/queue-types.js';
import { InProcessBatchRunner } from '../../src/jobs/batches/runner.js';
import { BatchService } from '../../src/jobs/batches/service.js';
import { MemoryBatchStore } from '../../src/store/batches-memory.js';
import type { BatchStore } from '../../src/store/batches.js';
import { loadZoneDirectory } from '../../packages/engine/src/zones/load.js';
import { makeApp } from '../http/helpers.js';

export { bearerA, bearerB, expectError, KEY_A, KEY_B } from '../http/helpers.js';

/** The fixture zones directory. */
export const FIXTURE_ZONES = fileURLToPath(new URL('../../fixtures/zones/', import.meta.url));
/** The batch routes' path. */
export const BATCHES = '/api/tools/v1/spoof-checker/batches';

/** Names that always get a verdict from the fixture zones (no DNS failure among them). */
export const VERDICT_NAMES = [
  'p-reject.example',
  'p-none.example',
  'p-quarantine.example',
  'no-dmarc.example',
  'spf-plus-all.example',
  'reject-sp-none.example',
  'dkim-none.example',
  'mx-google.example',
  'np-reject.example',
  'parked-locked.example',
];
/** A fixture whose DMARC lookup fails (SERVFAIL injected, as its scenario does): an error row after the retries. */
export const DNS_FAILURE_NAME = 'dmarc-servfail.example';

let zones: Resolver | undefined;
/** The fixture zones as one resolver (loaded once per test file), with SERVFAIL at `_dmarc.` of {@link DNS_FAILURE_NAME}. */
export async function fixtureResolver(): Promise<Resolver> {
  zones ??= new FaultyResolver(new ZoneResolver(await loadZoneDirectory(FIXTURE_ZONES)), [
    { name: `_dmarc.${DNS_FAILURE_NAME}`, type: 'TXT', fault: { kind: 'servfail' } },
  ]);
  return zones;
}

/** `checkDomain` over the fixture zones. */
export async function fixtureCheck(): Promise<(input: string) => ReturnType<typeof checkDomain>> {
  const resolver = await fixtureResolver();
  return (input) => checkDomain(input, { resolver });
}

/** A queue that runs nothing: records what it was given; `ready` and `enqueue` can be made to fail. */
export class FakeQueue implements BatchQueue {
  readonly kind = 'redis' as const;
  readonly enqueued: string[] = [];
  readiness: QueueReadiness = { ok: true };
  failEnqueue = false;

  async ready(): Promise<QueueReadiness> {
    return this.readiness;
  }

  async enqueue(batch: Batch): Promise<void> {
    if (this.failEnqueue) throw new Error('connection refused');
    this.enqueued.push(batch.id);
  }

  async close(): Promise<void> {}
}

/** An app (TEST_SEED: organisations A and B) with the batch routes over the given queue. */
export async function batchApp(options: { queue?: BatchQueue; store?: BatchStore; namesPerDay?: number; now?: () => Date } = {}): Promise<{
  app: FastifyInstance;
  service: BatchService;
  store: BatchStore;
  runner: InProcessBatchRunner | undefined;
}> {
  const store = options.store ?? new MemoryBatchStore();
  const check = await fixtureCheck();
  const runner = options.queue ? undefined : new InProcessBatchRunner({ store, check, concurrency: 8, retry: { attempts: 2, baseDelayMs: 1 } });
  const service = new BatchService({ store, queue: options.queue ?? runner!, ...(options.namesPerDay ? { namesPerDay: options.namesPerDay } : {}) });
  const { app } = await makeApp({ batches: service, check, now: options.now ?? (() => new Date()) });
  return { app, service, store, runner };
}

/** The lines of an NDJSON body, parsed. */
export function ndjson(body: string): Record<string, unknown>[] {
  return body
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
