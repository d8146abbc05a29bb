/**
 * Issue 38 item 5, measured: the hostile report bodies (test/ingest/hostile-reports.ts) sent to a
 * real listening service while `/healthz` is asked every 50 ms. Prints, per attack, the wall time
 * of the attack, its answer, the slowest `/healthz` answer during it and the growth of the process's
 * peak RSS (VmHWM). One attack per process, so that peaks do not mix:
 *
 *   npx tsx --tsconfig bench/tsconfig.json bench/hostile-reports.ts json|xml|smtp
 */
import { request } from 'node:http';
import { connect } from 'node:net';
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

async function smtpSend(port: number, raw: Buffer): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  let buffer = '';
  const waiting: ((line: string) => void)[] = [];
  socket.on('data', (chunk) => {
    buffer += chunk.toString('latin1');
    for (;;) {
      const match = /^(?:\d{3}-[^\n]*\n)*\d{3} [^\n]*\n/.exec(buffer);
      if (!match) break;
      buffer = buffer.slice(match[0].length);
      waiting.shift()?.(match[0].trimEnd());
    }
  });
  const reply = () => new Promise<string>((resolve) => waiting.push(resolve));
  const send = (line: string) => {
    const r = reply();
    socket.write(`${line}\r\n`);
    return r;
  };
  await reply();
  await send('EHLO bench.example');
  await send('MAIL FROM:<noreply-dmarc-support@google.com>');
  await send('RCPT TO:<dmarc@reports.example>');
  await send('DATA');
  const done = reply();
  socket.write(Buffer.concat([raw, Buffer.from('\r\n.\r\n')]));
  const answer = await done;
  socket.end('QUIT\r\n');
  return answer;
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
  const answer = which === 'smtp' ? await smtpSend(smtpPort, body) : await post(port, TLSRPT_PATH, body, which === 'json' ? 'application/tlsrpt+gzip' : 'application/gzip');
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
