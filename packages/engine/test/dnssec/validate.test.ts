/**
 * The validating stub against the signed fixtures on the embedded server (real UDP and TCP on
 * loopback), with the clock fixed: every case gets the state and RFC 8914 code unbound gives; then
 * answers tampered with on the way (stripped signatures and proofs, decoy signatures, a forged
 * NXDOMAIN, too many signatures) never come out secure; the clock decides expiry; anchors read.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningDnsServer } from '../../src/zones/server.js';
import { ianaRootAnchors, parseTrustAnchors } from '../../src/dnssec/anchors.js';
import { createRawQuery } from '../../src/dnssec/query.js';
import type { RawQuery, RawResponse } from '../../src/dnssec/types.js';
import { DnssecCache, MAX_SIGNATURES_PER_RRSET, Validator } from '../../src/dnssec/validate.js';
import { keyTag, parseDs } from '../../src/dnssec/verify.js';
import { TYPE, type RawMessage } from '../../src/dns/canonical.js';
import { CASES, DNSSEC_FIXTURES, FIXED_NOW, fixtureAnchors, startSignedServer } from './helpers.js';

let server: RunningDnsServer;
let query: RawQuery;

beforeAll(async () => {
  server = await startSignedServer();
  query = createRawQuery([server.address]);
});
afterAll(async () => {
  await server?.close();
});

function validator(options: { now?: number; query?: RawQuery } = {}): Validator {
  return new Validator({ query: options.query ?? query, anchors: fixtureAnchors(), now: () => options.now ?? FIXED_NOW });
}

/** A query whose responses pass through `change` for the questions `when` picks. */
function tampered(when: (name: string, type: number) => boolean, change: (message: RawMessage) => RawMessage): RawQuery {
  return async (name, type) => {
    const response: RawResponse = await query(name, type);
    if (response.kind !== 'response' || !when(name, type)) return response;
    return { kind: 'response', message: change(response.message) };
  };
}

describe('validation of every fixture case (the state and EDE code unbound gives)', () => {
  it.each(CASES.map((c) => [`${c.name} ${c.type}`, c] as const))('%s', async (_label, c) => {
    const result = await validator().validate(c.name, TYPE[c.type]);
    expect({ status: result.status, code: result.reason.code }).toEqual({ status: c.status, code: c.code });
    expect(result.reason.text.length).toBeGreaterThan(10);
  });

  it('follows a CNAME into another zone and reports each link', async () => {
    const result = await validator().validate('to-bogus.cname.test', TYPE.A);
    expect(result.links.map((l) => [l.name, l.type, l.status])).toEqual([
      ['to-bogus.cname.test', 'CNAME', 'secure'],
      ['mx1.expired.test', 'A', 'bogus'],
    ]);
    expect(result.answer).toBe('records');
  });
});

describe('the clock decides the windows (RFC 4034 §3.1.5)', () => {
  it('after 2035 (plus skew) the valid zones are expired; before 2025 not yet valid', async () => {
    const late = await validator({ now: Date.UTC(2035, 0, 3) / 1000 }).validate('secure-nsec.test', TYPE.MX);
    expect([late.status, late.reason.code]).toEqual(['bogus', 7]);
    const early = await validator({ now: Date.UTC(2024, 11, 30) / 1000 }).validate('secure-nsec.test', TYPE.MX);
    expect([early.status, early.reason.code]).toEqual(['bogus', 8]);
  });

  it('allows unbound\'s skew: an hour past expiry is still valid', async () => {
    const result = await validator({ now: Date.UTC(2035, 0, 1, 1) / 1000 }).validate('secure-nsec.test', TYPE.MX);
    expect(result.status).toBe('secure');
  });

  it('the expired zone was secure inside its own window (January 2020)', async () => {
    // Every other signature of the chain (root, test.) starts in 2025: so the chain is not yet valid then.
    const result = await validator({ now: Date.UTC(2020, 0, 15) / 1000 }).validate('expired.test', TYPE.MX);
    expect([result.status, result.reason.code]).toEqual(['bogus', 8]);
  });
});

describe('answers changed on the way are never secure', () => {
  it('MX without its RRSIG: bogus, RRSIGs missing (EDE 10)', async () => {
    const strip = tampered((n, t) => n === 'secure-nsec.test' && t === TYPE.MX, (m) => ({ ...m, answer: m.answer.filter((r) => r.type !== TYPE.RRSIG) }));
    const result = await validator({ query: strip }).validate('secure-nsec.test', TYPE.MX);
    expect([result.status, result.reason.code]).toEqual(['bogus', 10]);
  });

  it('NXDOMAIN without its NSEC records: bogus, NSEC missing (EDE 12)', async () => {
    for (const zone of ['secure-nsec.test', 'secure-nsec3.test']) {
      const strip = tampered((n) => n === `nope.${zone}`, (m) => ({ ...m, authority: m.authority.filter((r) => r.type === TYPE.SOA || (r.type === TYPE.RRSIG && r.rdata.readUInt16BE(0) === TYPE.SOA)) }));
      const result = await validator({ query: strip }).validate(`nope.${zone}`, TYPE.A);
      expect([zone, result.status, result.reason.code]).toEqual([zone, 'bogus', 12]);
    }
  });

  it('a wildcard answer without the proof that the name does not exist: bogus (RFC 4035 §5.3.4)', async () => {
    for (const zone of ['secure-nsec.test', 'secure-nsec3.test']) {
      const strip = tampered((n) => n === `x.wild.${zone}`, (m) => ({ ...m, authority: [] }));
      const result = await validator({ query: strip }).validate(`x.wild.${zone}`, TYPE.TXT);
      expect([zone, result.status, result.reason.code]).toEqual([zone, 'bogus', 12]);
    }
  });

  it('an NXDOMAIN for a name that exists, with the proof of another name, is bogus', async () => {
    const nx = await query('nope.secure-nsec.test', TYPE.A);
    if (nx.kind !== 'response') throw new Error('no answer');
    const forged = tampered((n, t) => n === 'www.secure-nsec.test' && t === TYPE.A, () => nx.message);
    const result = await validator({ query: forged }).validate('www.secure-nsec.test', TYPE.A);
    expect(result.status).toBe('bogus');
  });

  it('the DS of a signed child stripped, the parent\'s NSEC still listing it: bogus', async () => {
    const strip = tampered((n, t) => n === 'secure-nsec.test' && t === TYPE.DS, (m) => ({ ...m, answer: [] }));
    const result = await validator({ query: strip }).validate('secure-nsec.test', TYPE.MX);
    expect(result.status).toBe('bogus');
  });

  it('a decoy signature before the valid one does not matter (any valid signature wins, RFC 6840 §5.4)', async () => {
    const decoy = tampered((n, t) => n === 'secure-nsec.test' && t === TYPE.MX, (m) => {
      const sig = m.answer.find((r) => r.type === TYPE.RRSIG) as RawMessage['answer'][number];
      const broken = Buffer.from(sig.rdata);
      broken[broken.length - 1] = (broken[broken.length - 1] as number) ^ 0xff;
      return { ...m, answer: [{ ...sig, rdata: broken }, ...m.answer] };
    });
    expect((await validator({ query: decoy }).validate('secure-nsec.test', TYPE.MX)).status).toBe('secure');
  });

  it(`tries at most ${MAX_SIGNATURES_PER_RRSET} signatures per RRset (KeyTrap, CVE-2023-50387)`, async () => {
    const flood = tampered((n, t) => n === 'secure-nsec.test' && t === TYPE.MX, (m) => {
      const sig = m.answer.find((r) => r.type === TYPE.RRSIG) as RawMessage['answer'][number];
      const decoys = Array.from({ length: MAX_SIGNATURES_PER_RRSET }, (_, i) => {
        const broken = Buffer.from(sig.rdata);
        broken[broken.length - 1 - i] = (broken[broken.length - 1 - i] as number) ^ 0xff;
        return { ...sig, rdata: broken };
      });
      return { ...m, answer: [...m.answer.filter((r) => r.type !== TYPE.RRSIG), ...decoys, sig] };
    });
    expect((await validator({ query: flood }).validate('secure-nsec.test', TYPE.MX)).status).toBe('bogus');
  });

  it('an unreachable server is indeterminate, never secure or bogus', async () => {
    const down: RawQuery = async () => ({ kind: 'error', detail: 'no answer' });
    const result = await validator({ query: down }).validate('secure-nsec.test', TYPE.MX);
    expect([result.status, result.answer]).toEqual(['indeterminate', 'error']);
  });

  it('no trust anchor over the name: indeterminate', async () => {
    const v = new Validator({ query, anchors: parseTrustAnchors(readFileSync(`${DNSSEC_FIXTURES}root-anchor.ds`, 'utf8').replace(/^\./, 'other.'), 'x'), now: () => FIXED_NOW });
    expect(v.covers('secure-nsec.test')).toBe(false);
    expect((await v.validate('secure-nsec.test', TYPE.MX)).status).toBe('indeterminate');
  });
});

describe('a DnssecCache shared between validations', () => {
  it('reuses the root\'s and the TLD\'s keys: fewer queries, the same states, the same expiry', async () => {
    const cache = new DnssecCache();
    const shared = (): Validator => new Validator({ query, anchors: fixtureAnchors(), now: () => FIXED_NOW, cache });
    await shared().validate('secure-nsec.test', TYPE.MX);
    const fresh = validator();
    const warm = shared();
    const [a, b] = [await fresh.validate('alg13.test', TYPE.MX), await warm.validate('alg13.test', TYPE.MX)];
    expect([a.status, b.status]).toEqual(['secure', 'secure']);
    expect(warm.queriesSent()).toBeLessThan(fresh.queriesSent());
    expect(warm.earliestExpiration()).toBe(fresh.earliestExpiration());
    for (let i = 0; i < 2; i++) {
      const bogus = await shared().validate('expired.test', TYPE.MX);
      expect([bogus.status, bogus.reason.code]).toEqual(['bogus', 7]);
    }
    expect(cache.size).toBeGreaterThan(2);
  });

  it('does not keep an indeterminate state', async () => {
    const cache = new DnssecCache();
    const down: RawQuery = async () => ({ kind: 'error', detail: 'no answer' });
    await new Validator({ query: down, anchors: fixtureAnchors(), now: () => FIXED_NOW, cache }).validate('secure-nsec.test', TYPE.MX);
    await new Promise((resolve) => setTimeout(resolve, 10));
    const later = await new Validator({ query, anchors: fixtureAnchors(), now: () => FIXED_NOW, cache }).validate('secure-nsec.test', TYPE.MX);
    expect(later.status).toBe('secure');
  });
});

describe('trust anchors', () => {
  it('the IANA root KSK-2017 and KSK-2024', () => {
    const anchors = ianaRootAnchors();
    expect(anchors.map((a) => a.zone)).toEqual(['']);
    expect(anchors[0]?.ds.map((d) => parseDs(d)?.keyTag)).toEqual([20326, 38696]);
  });

  it('a DNSKEY anchor works as the DS anchor does', async () => {
    const keys = parseTrustAnchors(readFileSync(`${DNSSEC_FIXTURES}root-anchor.key`, 'utf8'));
    const dsTag = parseDs(fixtureAnchors()[0]?.ds[0] as Buffer)?.keyTag;
    expect(keys[0]?.dnskeys.map(keyTag)).toEqual([dsTag]);
    const v = new Validator({ query, anchors: keys, now: () => FIXED_NOW });
    expect((await v.validate('alg8.test', TYPE.MX)).status).toBe('secure');
  });

  it('refuses a file with other records, naming the file', () => {
    expect(() => parseTrustAnchors('. 3600 IN A 192.0.2.1', 'lab.anchor')).toThrow(/lab\.anchor/);
  });
});
