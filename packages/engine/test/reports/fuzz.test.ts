/**
 * Hostile bytes never crash the report engine: random mutations of real report files, through
 * unpack and both parsers, always end in an outcome (a seeded generator, so a failure repeats).
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { parseAggregateReport } from '../../src/reports/parse-aggregate.js';
import { parseTlsReport } from '../../src/reports/parse-tls.js';
import { unpackReportFile } from '../../src/reports/unpack.js';
import { fixture } from './helpers.js';

/** mulberry32: a small seeded generator. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function mutate(bytes: Uint8Array, next: () => number): Uint8Array {
  const out = Uint8Array.from(bytes);
  const changes = 1 + Math.floor(next() * 8);
  for (let i = 0; i < changes; i++) out[Math.floor(next() * out.length)] = Math.floor(next() * 256);
  return next() < 0.3 ? out.subarray(0, Math.floor(next() * out.length)) : out;
}

const FILES = [
  'google.com!spf-cloud-ec2.example!1795219200!1795305599.zip',
  'protection.outlook.com!spf-cloud-ec2.example!1795219200!1795305600.xml.gz',
  'mail.example.net-two-days.zip',
  'src/gmx.net!spf-cloud-ec2.example!1795305600!1795391999.xml',
  'src/google.com!spf-cloud-ec2.example!2026-11-21.json',
];

describe('random mutations of report files', () => {
  it.each(FILES)('%s: 300 mutations, each ends in an outcome', (file) => {
    const next = random(0x5eed ^ file.length);
    const original = fixture(file);
    for (let i = 0; i < 300; i++) {
      const bytes = mutate(original, next);
      const unpacked = unpackReportFile(bytes);
      expect(typeof unpacked.ok).toBe('boolean');
      for (const document of unpacked.ok ? unpacked.documents : [{ kind: 'aggregate' as const, bytes }, { kind: 'tls' as const, bytes }]) {
        const parsed = document.kind === 'aggregate' ? parseAggregateReport(document.bytes) : parseTlsReport(document.bytes);
        expect(typeof parsed.ok).toBe('boolean');
        if (!parsed.ok) expect(parsed.detail.length).toBeGreaterThan(0);
      }
    }
  });

  it('a gzip of mutated XML: the same', () => {
    const next = random(42);
    const original = fixture('src/yahoo.com!spf-cloud-ec2.example!1795132800!1795219199.xml');
    for (let i = 0; i < 200; i++) {
      const unpacked = unpackReportFile(gzipSync(mutate(original, next)));
      if (unpacked.ok) expect(typeof parseAggregateReport(unpacked.documents[0]!.bytes).ok).toBe('boolean');
    }
  });
});
