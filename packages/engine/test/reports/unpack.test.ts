/**
 * Unpacking report files: each container by its first bytes, whatever its name says; every refusal
 * with its reason; decompression bombs stopped at the cap without allocating them.
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MAX_UNCOMPRESSED_BYTES, unpackReportFile } from '../../src/reports/unpack.js';
import { fixture } from './helpers.js';
import { makeZip } from './zip.js';

const google = 'google.com!spf-cloud-ec2.example!1795219200!1795305599';
const outlook = 'protection.outlook.com!spf-cloud-ec2.example!1795219200!1795305600';

describe('unpackReportFile: files as reporters send them', () => {
  it.each([
    ['Google zip', `${google}.zip`, 'zip', [[`${google}.xml`, 'aggregate']]],
    ['Microsoft .xml.gz', `${outlook}.xml.gz`, 'gzip', [[`${outlook}.xml`, 'aggregate']]],
    ['Mimecast gzip with trailing CRLF', 'mimecast-trailing-crlf.xml.gz', 'gzip', [['mimecast-trailing-crlf.xml', 'aggregate']]],
    ['raw XML (RFC 9990 namespaced)', 'src/gmx.net!spf-cloud-ec2.example!1795305600!1795391999.xml', 'xml', [['gmx.net!spf-cloud-ec2.example!1795305600!1795391999.xml', 'aggregate']]],
    ['TLS-RPT JSON', 'src/google.com!spf-cloud-ec2.example!2026-11-21.json', 'json', [['google.com!spf-cloud-ec2.example!2026-11-21.json', 'tls']]],
    ['TLS-RPT .json.gz', 'microsoft.com!spf-cloud-ec2.example!2026-11-21.json.gz', 'gzip', [['microsoft.com!spf-cloud-ec2.example!2026-11-21.json', 'tls']]],
    [
      'a zip with several entries (a readme skipped)',
      'mail.example.net-two-days.zip',
      'zip',
      [
        ['mail.example.net!spf-cloud-ec2.example!1794960000!1795046399.xml', 'aggregate'],
        ['mail.example.net!spf-cloud-ec2.example!1795046400!1795132799.xml', 'aggregate'],
      ],
    ],
  ])('%s', (_, file, container, documents) => {
    const outcome = unpackReportFile(fixture(file), { filename: file });
    expect(outcome.ok, JSON.stringify(outcome)).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.container).toBe(container);
    expect(outcome.documents.map((d) => [d.name, d.kind])).toEqual(documents);
    for (const document of outcome.documents) expect([0x3c, 0x7b]).toContain(document.bytes[0]);
  });

  it('decides by the bytes, not the name or type: a zip named .xml.gz and typed application/gzip', () => {
    const outcome = unpackReportFile(fixture(`${google}.zip`), { filename: 'report.xml.gz', contentType: 'application/gzip' });
    expect(outcome).toMatchObject({ ok: true, container: 'zip' });
  });

  it('reads a gzip with several members as one document (RFC 1952 §2.2)', () => {
    const xml = fixture(`src/${google}.xml`);
    const two = Buffer.concat([gzipSync(xml.subarray(0, 100)), gzipSync(xml.subarray(100))]);
    const outcome = unpackReportFile(two);
    expect(outcome.ok && Buffer.from(outcome.documents[0]!.bytes).equals(xml)).toBe(true);
  });

  it('names documents by the last path segment only', () => {
    const outcome = unpackReportFile(makeZip([{ name: '../../etc/x.xml', data: '<feedback/>' }]));
    expect(outcome.ok && outcome.documents[0]!.name).toBe('x.xml');
  });
});

describe('unpackReportFile refuses', () => {
  const xml = '<feedback/>';
  it.each([
    ['an empty file', Buffer.alloc(0), 'empty'],
    ['a PDF', Buffer.from('%PDF-1.7 ...'), 'unknown-format'],
    ['a truncated gzip', fixture('truncated.xml.gz'), 'truncated'],
    ['a gzip with a broken CRC', ((b: Buffer) => (b.writeUInt32LE(0xdeadbeef, b.length - 8), b))(gzipSync(xml)), 'corrupt'],
    ['a gzip of binary data', gzipSync(Buffer.from([0, 1, 2, 3])), 'unknown-format'],
    ['a gzip inside a gzip', gzipSync(gzipSync(xml)), 'nested-archive'],
    ['a zip inside a zip', makeZip([{ name: 'in.zip', data: makeZip([{ name: 'a.xml', data: xml }]) }]), 'nested-archive'],
    ['an encrypted zip entry', makeZip([{ name: 'a.xml', data: xml, flags: 1 }]), 'encrypted'],
    ['a zip entry compressed with bzip2', makeZip([{ name: 'a.xml', data: xml, method: 'stored', methodCode: 12 }]), 'unsupported'],
    ['a zip whose declared size lies (too small)', makeZip([{ name: 'a.xml', data: xml.repeat(50), declaredSize: 10 }]), 'corrupt'],
    ['a zip whose declared size lies (too big)', makeZip([{ name: 'a.xml', data: xml, declaredSize: 5000 }]), 'corrupt'],
    ['a zip of too many entries', makeZip(Array.from({ length: 40 }, (_, i) => ({ name: `${i}.xml`, data: xml }))), 'too-many-entries'],
    ['a zip with no report in it', makeZip([{ name: 'readme.txt', data: 'hello' }]), 'no-report'],
    ['a zip cut before its directory', makeZip([{ name: 'a.xml', data: xml }]).subarray(0, 40), 'truncated'],
  ])('%s', (_, bytes, reason) => {
    const outcome = unpackReportFile(bytes);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.reason).toBe(reason);
      expect(outcome.detail.length).toBeGreaterThan(10);
    }
  });

  it('a file over the input cap', () => {
    expect(unpackReportFile(Buffer.from('<feedback/>'), { caps: { maxInputBytes: 5 } })).toMatchObject({ ok: false, reason: 'too-large' });
  });
});

describe('decompression bombs stop at the cap', () => {
  // 60 MiB of zeros behind an XML start: about 60 KB of gzip, a ratio of about 1,000:1.
  const bombContent = Buffer.concat([Buffer.from('<feedback>'), Buffer.alloc(60 * 1024 * 1024, 0x20)]);
  const gzipBomb = gzipSync(bombContent, { level: 9 });

  it('a gzip bomb: refused for its ratio, in bounded memory', () => {
    const before = process.memoryUsage().arrayBuffers;
    const outcome = unpackReportFile(gzipBomb);
    expect(outcome).toMatchObject({ ok: false, reason: 'ratio-exceeded' });
    if (!outcome.ok) expect(outcome.detail).toMatch(/stopped at the cap/);
    // Never the 60 MiB: at most the ratio cap's output (200 × ~60 KB ≈ 12 MiB) was held.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(40 * 1024 * 1024);
  });

  it('a gzip bomb with the ratio cap lifted: refused at the size cap', () => {
    const outcome = unpackReportFile(gzipBomb, { caps: { maxCompressionRatio: 100_000 } });
    expect(outcome).toMatchObject({ ok: false, reason: 'too-large' });
    if (!outcome.ok) expect(outcome.detail).toContain(String(MAX_UNCOMPRESSED_BYTES));
  });

  it('a zip bomb whose header declares the real size: refused before inflating', () => {
    const zipBomb = makeZip([{ name: 'bomb.xml', data: bombContent }]);
    expect(unpackReportFile(zipBomb)).toMatchObject({ ok: false, reason: 'too-large' });
  });

  it('a zip bomb whose header lies about its size: stopped one byte past the declared size', () => {
    const zipBomb = makeZip([{ name: 'bomb.xml', data: bombContent, declaredSize: 1000 }]);
    expect(unpackReportFile(zipBomb)).toMatchObject({ ok: false, reason: 'corrupt' });
  });

  it('many entries that together pass the total cap', () => {
    const entry = Buffer.concat([Buffer.from('<feedback>'), Buffer.alloc(900 * 1024, 0x20), Buffer.from('</feedback>')]);
    const zip = makeZip(Array.from({ length: 10 }, (_, i) => ({ name: `${i}.xml`, data: entry })));
    expect(unpackReportFile(zip, { caps: { maxTotalUncompressedBytes: 5 * 1024 * 1024 } })).toMatchObject({ ok: false, reason: 'too-large' });
  });
});
