/**
 * The validator against NSD, as the kept-back lab runs it: NSD serves every signed fixture zone
 * (root, test. and the children) on loopback, and every fixture case must get the same state and
 * RFC 8914 code as over the embedded server. So our server's DNSSEC answers are not the only ones
 * the validator understands.
 *
 * Needs Debian `nsd`: without it this test fails and says so.
 */
import { readdir, readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRawQuery } from '../../src/dnssec/query.js';
import { Validator } from '../../src/dnssec/validate.js';
import { TYPE } from '../../src/dns/canonical.js';
import { parseSignedZone } from '../../src/zones/signed-zonefile.js';
import { startNsd, type RunningNsd } from '../acceptance/nsd.js';
import { CASES, DNSSEC_FIXTURES, FIXED_NOW, fixtureAnchors } from './helpers.js';

let nsd: RunningNsd | undefined;

beforeAll(async () => {
  const zones = new Map<string, string>();
  for (const file of await readdir(`${DNSSEC_FIXTURES}zones`)) {
    const text = await readFile(`${DNSSEC_FIXTURES}zones/${file}`, 'utf8');
    zones.set(parseSignedZone(text).origin || '.', text);
  }
  nsd = await startNsd(zones, 'test');
}, 30_000);

afterAll(async () => {
  await nsd?.stop();
});

describe('validation over NSD serving the signed fixtures', () => {
  it.each(CASES.map((c) => [`${c.name} ${c.type}`, c] as const))('%s', async (_label, c) => {
    const [host, port] = (nsd as RunningNsd).address.split(':');
    const query = createRawQuery([{ host: host as string, port: Number(port) }], { timeoutMs: 1000 });
    const result = await new Validator({ query, anchors: fixtureAnchors(), now: () => FIXED_NOW }).validate(c.name, TYPE[c.type]);
    expect({ status: result.status, code: result.reason.code }).toEqual({ status: c.status, code: c.code });
  });
});
