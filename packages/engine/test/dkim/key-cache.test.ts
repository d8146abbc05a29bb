/**
 * The decoded-key cache of the DKIM parser and the single-wave probe: both only save time, so the
 * outcomes must be the same as without them, and nothing a caller does to one result may show in
 * the next.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseDkimKeyRecord } from '../../src/dkim/parse.js';
import { probeDkim } from '../../src/dkim/probe.js';
import { KNOWN_SELECTORS } from '../../src/dkim/selectors.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import { InjectingResolver } from './injecting-resolver.js';

const keys = (JSON.parse(readFileSync(new URL('../../../../conformance/dkim/cases.json', import.meta.url), 'utf8')) as { keys: Record<string, string> }).keys;
const RSA2048 = keys['GEN-RSA2048'] as string;
const ED25519 = keys['GEN-ED25519-RAW'] as string;

describe('parseDkimKeyRecord: decoded keys are cached by their text', () => {
  it.each([
    { record: `v=DKIM1; k=rsa; p=${RSA2048}`, status: 'valid', reason: 'an RSA key' },
    { record: `v=DKIM1; k=ed25519; p=${ED25519}`, status: 'valid', reason: 'an Ed25519 key' },
    { record: 'v=DKIM1; k=rsa; p=AAAA', status: 'bad-key', reason: 'base64 that is no key' },
    { record: 'v=DKIM1; k=rsa; p=not*base64', status: 'invalid-syntax', reason: 'text that is not base64' },
    { record: `v=DKIM1; k=ed25519; p=${RSA2048}`, status: 'bad-key', reason: 'an RSA key under k=ed25519 (same text, other type)' },
  ])('gives the same outcome the second time: $reason', ({ record, status }) => {
    const first = parseDkimKeyRecord(record);
    const second = parseDkimKeyRecord(record);
    expect(first.status).toBe(status);
    expect(second).toEqual(first);
  });

  it('hands out a fresh key object each time, so a caller cannot change the next result', () => {
    const record = `v=DKIM1; p=${RSA2048}`;
    const first = parseDkimKeyRecord(record);
    if (first.status !== 'valid') throw new Error(`expected a valid key, got ${first.status}`);
    (first.record.key as { bits: number }).bits = 1;
    const second = parseDkimKeyRecord(record);
    expect(second).toMatchObject({ status: 'valid', record: { key: { type: 'rsa', bits: 2048, encoding: 'spki' } } });
  });
});

describe('probeDkim: one wave', () => {
  it('sends every selector query at once, each once', async () => {
    const resolver = new InjectingResolver(new ZoneResolver([]), [], 5);
    const probe = await probeDkim('example.com', resolver, { selectors: ['s2024', 'custom'] });
    const distinct = new Set(KNOWN_SELECTORS.map((entry) => entry.selector)).size;
    expect(probe.probed).toBeGreaterThan(distinct); // the caller's two, the list, Microsoft's
    expect(resolver.maxInFlight).toBe(probe.probed);
    expect(new Set(resolver.calls.map((call) => call.name)).size).toBe(resolver.calls.length);
  });
});
