/**
 * The regression corpus with answers that are partly held and partly waited for. A warm check runs
 * without awaiting (every answer held: the in-memory corpus test), a cold one waits on every answer
 * (the over-DNS corpus test); a check on a half-warm cache switches between the two in the middle of
 * every walk (SPF includes, the DMARC tree walk, the DKIM probe, MX hosts). Each scenario must still
 * give its golden, whichever half of its answers waits.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { DnsAnswer, RecordType, Resolver } from '../../src/dns/types.js';
import type { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { loadCorpusResolver, loadScenarios, readGolden, runScenario } from './project.js';

/**
 * Holds the answers of names whose hash has the given parity (the per-check resolver takes those at
 * once, as from a warm cache) and makes every other answer wait a turn of the event loop.
 */
class HalfHeldResolver implements Resolver {
  constructor(
    private readonly zones: ZoneResolver,
    private readonly heldParity: 0 | 1,
  ) {}

  heldAnswer<T extends RecordType>(canonical: string, type: T): DnsAnswer<T> | undefined {
    return this.held(canonical, type) ? this.zones.resolveSync(canonical, type) : undefined;
  }

  async resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    if (!this.held(name, type)) await new Promise((resolve) => setImmediate(resolve));
    return this.zones.resolveSync(name, type);
  }

  private held(name: string, type: string): boolean {
    let hash = 0;
    for (const char of `${type} ${name.toLowerCase()}`) hash = (hash * 31 + char.charCodeAt(0)) | 0;
    return (hash & 1) === this.heldParity;
  }
}

const scenarios = await loadScenarios();
let zones: ZoneResolver;
beforeAll(async () => {
  zones = await loadCorpusResolver();
});

describe.each([0, 1] as const)('regression corpus, half the answers held (parity %i)', (parity) => {
  for (const scenario of scenarios) {
    it(scenario.name, async () => {
      const golden = await readGolden(scenario.name);
      expect(golden, `no golden for ${scenario.name}`).toBeDefined();
      expect(await runScenario(scenario, new HalfHeldResolver(zones, parity))).toEqual(golden);
    });
  }
});
