/**
 * Issue 38 item 7: the storage quota counts the bytes actually read, whatever the headers say (a
 * chunked upload has no Content-Length), refusing as soon as they pass it, and the records a report
 * upload stored (a small gzip of many records costs what it stores). Against a real listening service.
 */
import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { REPORTS_PATH } from '../../src/http/routes/reports.js';
import { QUOTA_CHARGE_STEP_BYTES, STORED_RECORD_QUOTA_BYTES } from '../../src/http/storage-quota.js';
import { KEY_A, makeApp } from './helpers.js';

const MiB = 1024 * 1024;
const QUOTA = 4 * MiB;

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function listen(): Promise<number> {
  ({ app } = await makeApp({ now: () => new Date(), rateLimits: { organizationWriteBytes: { max: QUOTA, windowMs: 86_400_000 } } }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  return (app.server.address() as { port: number }).port;
}

/** POSTs `body` in 64 KiB chunks with no Content-Length (Transfer-Encoding: chunked). */
function chunkedUpload(port: number, body: Buffer, type = 'application/octet-stream'): Promise<{ status: number; code: string | undefined; sent: number }> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    const req = request({ host: '127.0.0.1', port, path: REPORTS_PATH, method: 'POST', agent: false, headers: { authorization: `Bearer ${KEY_A}`, 'content-type': type } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        resolve({ status: res.statusCode ?? 0, code: text.startsWith('{') ? (JSON.parse(text) as { code?: string }).code : undefined, sent });
      });
    });
    req.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error)));
    const write = (at: number): void => {
      if (at >= body.length || req.destroyed) {
        req.end();
        return;
      }
      sent = at + 64 * 1024;
      if (req.write(body.subarray(at, at + 64 * 1024))) setImmediate(() => write(at + 64 * 1024));
      else req.once('drain', () => write(at + 64 * 1024));
    };
    write(0);
  });
}

describe('the storage quota', () => {
  it('counts the bytes of chunked uploads (no Content-Length): the third 1.5 MiB upload passes 4 MiB and is refused', async () => {
    const port = await listen();
    const body = Buffer.alloc(1.5 * MiB, 0x41);
    const answers = [];
    for (let n = 0; n < 3; n++) answers.push(await chunkedUpload(port, body));
    // Not a report (422), but read and stored as a rejection: charged.
    expect(answers.map((a) => a.status)).toEqual([422, 422, 413]);
    expect(answers[2]!.code).toBe('STORAGE_QUOTA_EXCEEDED');
  }, 60_000);

  it('refuses a chunked body as soon as the bytes read pass the quota, not after reading it all', async () => {
    const port = await listen();
    const answer = await chunkedUpload(port, Buffer.alloc(20 * MiB, 0x41));
    expect(answer).toMatchObject({ status: 413, code: 'STORAGE_QUOTA_EXCEEDED' });
    // Refused within a charge step (and the socket's buffers) of the quota, not at 20 MiB.
    expect(answer.sent).toBeLessThan(QUOTA + QUOTA_CHARGE_STEP_BYTES + 4 * MiB);
  }, 60_000);

  it('charges the records stored: a 100 KB gzip of 20,000 records spends the quota, and the next write is refused', async () => {
    const port = await listen();
    const record = (i: number) =>
      `<record><row><source_ip>10.0.${(i >> 8) & 255}.${i & 255}</source_ip><count>1</count><policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row><identifiers><header_from>example.com</header_from></identifiers></record>`;
    const now = Math.floor(Date.now() / 1000) - 86_400;
    const report = gzipSync(
      `<feedback><report_metadata><org_name>x</org_name><email>a@x.example</email><report_id>r1</report_id><date_range><begin>${now}</begin><end>${now + 86_399}</end></date_range></report_metadata><policy_published><domain>example.com</domain><p>none</p></policy_published>${Array.from({ length: 20_000 }, (_, i) => record(i)).join('')}</feedback>`,
    );
    expect(report.length).toBeLessThan(QUOTA / 10);
    expect(20_000 * STORED_RECORD_QUOTA_BYTES).toBeGreaterThan(QUOTA);
    const stored = await chunkedUpload(port, report, 'application/gzip');
    expect(stored.status).toBe(200);
    const next = await chunkedUpload(port, Buffer.from('<x/>'), 'application/xml');
    expect(next).toMatchObject({ status: 413, code: 'STORAGE_QUOTA_EXCEEDED' });
  }, 60_000);
});
