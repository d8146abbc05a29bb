/**
 * Builds the compressed report fixtures of fixtures/reports/ from the XML and JSON in
 * fixtures/reports/src/, deterministically (gzip with no time stamp, zip entries dated 1980-01-01),
 * so `npx tsx scripts/make-report-fixtures.ts` rewrites them byte for byte. The decompression bombs
 * are not committed: packages/engine/test/reports/unpack.test.ts makes them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { makeZip } from '../packages/engine/test/reports/zip.js';

const src = new URL('../fixtures/reports/src/', import.meta.url);
const out = new URL('../fixtures/reports/', import.meta.url);
const read = (name: string): Buffer => readFileSync(new URL(name, src));
const write = (name: string, bytes: Uint8Array): void => writeFileSync(new URL(name, out), bytes);
const gzip = (bytes: Uint8Array): Buffer => gzipSync(bytes, { level: 9 });

const google = 'google.com!spf-cloud-ec2.example!1795219200!1795305599';
const outlook = 'protection.outlook.com!spf-cloud-ec2.example!1795219200!1795305600';
const yahoo = 'yahoo.com!spf-cloud-ec2.example!1795132800!1795219199';
const small = ['mail.example.net!spf-cloud-ec2.example!1794960000!1795046399', 'mail.example.net!spf-cloud-ec2.example!1795046400!1795132799'];

// Google: a zip with one entry named like the file (RFC 7489 §7.2.1.1 naming).
write(`${google}.zip`, makeZip([{ name: `${google}.xml`, data: read(`${google}.xml`) }]));
// Microsoft and Yahoo: .xml.gz.
const outlookGz = gzip(read(`${outlook}.xml`));
write(`${outlook}.xml.gz`, outlookGz);
write(`${yahoo}.xml.gz`, gzip(read(`${yahoo}.xml`)));
// Mimecast's shape: a gzip followed by CRLF (parsedmarc#429).
write(`mimecast-trailing-crlf.xml.gz`, Buffer.concat([gzip(read(`${yahoo}.xml`)), Buffer.from('\r\n')]));
// A zip with several entries: two daily reports of one reporter, plus a readme that is not a report.
write(
  'mail.example.net-two-days.zip',
  makeZip([
    { name: `${small[0]}.xml`, data: read(`${small[0]}.xml`) },
    { name: `${small[1]}.xml`, data: read(`${small[1]}.xml`), method: 'stored' },
    { name: 'README.txt', data: 'DMARC aggregate reports from mail.example.net\n' },
  ]),
);
// A gzip cut in transit: the first 60% of the Microsoft file.
write('truncated.xml.gz', outlookGz.subarray(0, Math.floor(outlookGz.length * 0.6)));
// TLS-RPT: Microsoft's as .json.gz (RFC 8460 §5.3 application/tlsrpt+gzip).
write('microsoft.com!spf-cloud-ec2.example!2026-11-21.json.gz', gzip(read('microsoft.com!spf-cloud-ec2.example!2026-11-21.json')));
console.log('fixtures/reports written');
