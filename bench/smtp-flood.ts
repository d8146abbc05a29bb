/**
 * Issue 38 item 8, measured: ten concurrent 23 MiB messages to the SMTP report receiver on loopback;
 * prints the answers and the growth of the process's peak RSS (the one message buffer the senders
 * share is made before the measure starts).
 *
 *   npx tsx --tsconfig bench/tsconfig.json bench/smtp-flood.ts
 */
import { connect } from 'node:net';
import { SmtpReportReceiver } from '../src/ingest/smtp.js';
import { createMemoryStores } from '../src/store/memory.js';
import { reportMessage } from '../test/ingest/helpers.js';
import { peakRssMb } from '../test/ingest/hostile-reports.js';

function send(port: number, raw: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const script = ['EHLO bench.example', 'MAIL FROM:<a@bench.example>', 'RCPT TO:<dmarc@reports.example>', 'DATA'];
    let buffer = '';
    let step = -1;
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      for (;;) {
        const match = /^(?:\d{3}-[^\n]*\n)*\d{3} [^\n]*\n/.exec(buffer);
        if (!match) break;
        buffer = buffer.slice(match[0].length);
        step += 1;
        if (step < script.length) socket.write(`${script[step]}\r\n`);
        else if (step === script.length) socket.write(Buffer.concat([raw, Buffer.from('\r\n.\r\n')]));
        else {
          socket.destroy();
          resolve(match[0].trim().slice(0, 60));
        }
      }
    });
    socket.on('error', (error) => resolve(`error ${error.message}`));
  });
}

const stores = createMemoryStores();
await stores.apiKeys.addOrganization({ id: 'o1', name: 'o1' });
const receiver = new SmtpReportReceiver({ store: stores.reports, port: 0, reportAddresses: ['dmarc@reports.example'] });
const { port } = await receiver.start();
const attachment = Buffer.alloc(17 * 1024 * 1024);
for (let i = 0; i < attachment.length; i++) attachment[i] = (i * 2654435761) >>> 24;
const raw = reportMessage({ attachment, fileName: 'big.bin', contentType: 'application/octet-stream' });
const before = peakRssMb();
const started = performance.now();
const answers = await Promise.all(Array.from({ length: 10 }, () => send(port, raw)));
console.log(JSON.stringify({ messageMiB: +(raw.length / 1048576).toFixed(1), answers: answers.map((a) => a.slice(0, 3)), wallMs: Math.round(performance.now() - started), peakRssGrowthMb: Math.round(peakRssMb() - before) }));
await receiver.stop();
process.exit(0);
