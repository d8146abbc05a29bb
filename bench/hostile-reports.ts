/**
 * Issue 38 item 5, measured: the hostile report bodies (test/ingest/hostile-reports.ts) sent to a
 * real listening service while `/healthz` is asked every 50 ms. Prints, per attack, the wall time
 * of the attack, its answer, the slowest `/healthz` answer during it and the growth of the process's
 * peak RSS (VmHWM). One attack per process, so that peaks do not mix:
 *
 *   npx tsx --tsconfig bench/tsconfig.json bench/hostile-reports.ts json|xml|smtp
 */
import { request } from 'node:http';
import { smtpSend } from '../test/support/smtp-client.js';
import { SmtpReportReceiver } from '../src/ingest/smtp.js';
import { TLSRPT_PATH } from '../src/http/routes/reports.js';
import { buildApp } from '../src/service/compose.js';
import { createMemoryStores } from '../src/store/memory.js';
import { emptyElementsXmlGzip, manyPartsMessage, nestedJsonGzip, peakRssMb, startHealthPoller } from '../test/ingest/hostile-reports.js';

function get(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

function post(port: number, path: string, body: Buffer, type: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', agent: false, headers: { 'content-type': type, 'content-length': body.length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}


async function main(): Promise<void> {
  const which = process.argv[2] ?? 'json';
  const stores = createMemoryStores();
  const app = await buildApp({ stores, rateLimits: false, check: async () => { throw new Error('unused'); } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as { port: number }).port;
  const body = which === 'json' ? nestedJsonGzip() : which === 'xml' ? emptyElementsXmlGzip() : manyPartsMessage();
  const receiver = which === 'smtp' ? new SmtpReportReceiver({ store: stores.reports, port: 0, reportAddresses: ['dmarc@reports.example'] }) : null;
  const smtpPort = receiver ? (await receiver.start()).port : 0;
  for (let n = 0; n < 5; n++) await get(port, '/healthz');
  const before = peakRssMb();
  // The poller runs in its own thread: a blocked event loop here cannot hide its own slowness.
  const poller = await startHealthPoller(port);
  const started = performance.now();
  const cpu = process.cpuUsage();
  const answer = which === 'smtp' ? await smtpSend(smtpPort, body, 'bench.example') : await post(port, TLSRPT_PATH, body, which === 'json' ? 'application/tlsrpt+gzip' : 'application/gzip');
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const polled = await poller.stop();
  const answered = polled.answered;
  const slowest = polled.slowest;
  console.log(
    JSON.stringify({
      attack: which,
      bodyBytes: body.length,
      wallMs: Math.round(wall),
      mainThreadCpuMs: Math.round((used.user + used.system) / 1000),
      answer: typeof answer === 'string' ? answer.slice(0, 200) : `${answer.status} ${answer.body.slice(0, 200)}`,
      healthzAnswered: answered,
      slowestHealthzMs: Math.round(slowest),
      peakRssGrowthMb: Math.round(peakRssMb() - before),
    }),
  );
  await receiver?.stop();
  await app.close();
  process.exit(0);
}

await main();
