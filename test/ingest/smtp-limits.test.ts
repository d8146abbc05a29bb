/**
 * Issue 38 item 8: the SMTP report receiver's per-client limits, against a real receiver on loopback,
 * asserted by counts: the connection is cut after SMTP_MAX_REFUSED_RECIPIENTS refused recipients (the
 * DNS queries they cost are counted), at most MAX_DKIM_SIGNATURES signatures of a message are looked
 * up, at most SMTP_MAX_CONNECTIONS_PER_CLIENT connections per address, a connection idle before MAIL
 * is closed, and messages past the in-flight byte budget are answered 452.
 *
 * The expected counts are written here as numbers (20 refused recipients, 10 signatures, 10
 * connections), not imported: a receiver without the limits fails on the counts, not at import.
 */
import { generateKeyPairSync } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dkimSign } from 'mailauth';
import { loadZoneDirectory, ZoneResolver, type DnsAnswer, type RecordType, type Resolver } from '@spoof-checker/engine';
import { SmtpReportReceiver, type SmtpReceiverLimits } from '../../src/ingest/smtp.js';
import { createMemoryStores } from '../../src/store/memory.js';
import { FIXTURE_ZONES } from '../cli/helpers.js';
import { fixture, GOOGLE_ZIP, reportMessage } from './helpers.js';

/** SMTP_MAX_REFUSED_RECIPIENTS, MAX_DKIM_SIGNATURES and SMTP_MAX_CONNECTIONS_PER_CLIENT (src/ingest/smtp.ts, authenticate.ts), as the receiver must apply them. */
const REFUSED_RECIPIENTS = 20;
const DKIM_SIGNATURES = 10;
const CONNECTIONS_PER_CLIENT = 10;

/** Counts every query it passes on. */
class CountingResolver implements Resolver {
  readonly queries: string[] = [];
  constructor(private readonly inner: Resolver) {}
  resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    this.queries.push(`${name} ${type}`);
    return this.inner.resolve(name, type);
  }
}

let zones: Resolver;
beforeAll(async () => {
  zones = new ZoneResolver(await loadZoneDirectory(FIXTURE_ZONES));
});

let receiver: SmtpReportReceiver | undefined;
afterEach(async () => {
  await receiver?.stop();
  receiver = undefined;
});

async function start(resolver: Resolver, limits: Partial<SmtpReceiverLimits> = {}): Promise<number> {
  const stores = createMemoryStores();
  await stores.apiKeys.addOrganization({ id: 'o1', name: 'o1' });
  receiver = new SmtpReportReceiver({ store: stores.reports, resolver, reportAddresses: ['dmarc@reports.example'], port: 0, limits });
  return (await receiver.start()).port;
}

/** A line-oriented SMTP client: each reply whole, and whether the server closed. */
class Client {
  readonly socket: Socket;
  closed = false;
  #buffer = '';
  readonly #replies: string[] = [];
  readonly #waiting: ((reply: string | null) => void)[] = [];

  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.on('data', (chunk) => {
      this.#buffer += chunk.toString('latin1');
      for (;;) {
        const match = /^(?:\d{3}-[^\n]*\n)*\d{3} [^\n]*\n/.exec(this.#buffer);
        if (!match) break;
        this.#buffer = this.#buffer.slice(match[0].length);
        const reply = match[0].trimEnd();
        const waiter = this.#waiting.shift();
        if (waiter) waiter(reply);
        else this.#replies.push(reply);
      }
    });
    this.socket.on('error', () => undefined);
    this.socket.on('close', () => {
      this.closed = true;
      for (const waiter of this.#waiting.splice(0)) waiter(null);
    });
  }

  reply(): Promise<string | null> {
    const ready = this.#replies.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  send(line: string): Promise<string | null> {
    if (!this.closed) this.socket.write(`${line}\r\n`);
    return this.reply();
  }
}

describe('SMTP receiver limits', () => {
  it(`cuts the connection after ${REFUSED_RECIPIENTS} refused recipients: 50 tried, DNS queries bounded`, async () => {
    const resolver = new CountingResolver(zones);
    const port = await start(resolver);
    const client = new Client(port);
    expect(await client.reply()).toMatch(/^220/);
    await client.send('EHLO relay.example');
    await client.send('MAIL FROM:<a@relay.example>');
    const replies: string[] = [];
    for (let n = 0; n < 50 && !client.closed; n++) {
      const reply = await client.send(`RCPT TO:<x@r${n}.victim.example>`);
      if (reply !== null) replies.push(reply.slice(0, 3));
    }
    expect(replies).toEqual([...Array(REFUSED_RECIPIENTS - 1).fill('550'), '421']);
    expect(client.closed).toBe(true);
    // Two records looked up per refused domain (its DMARC and TLS-RPT rua), and no more domains.
    expect(resolver.queries.length).toBeLessThanOrEqual(2 * REFUSED_RECIPIENTS);
    expect(receiver!.counters.cutForRefusedRecipients).toBe(1);
  }, 30_000);

  it(`looks up at most ${DKIM_SIGNATURES} of a message's 30 DKIM signatures`, async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const message = reportMessage({ attachment: fixture(GOOGLE_ZIP), fileName: GOOGLE_ZIP, contentType: 'application/zip' });
    const signatureData = Array.from({ length: 30 }, (_, n) => ({ signingDomain: 'google.com', selector: `s${n}`, privateKey: pem }));
    const signed = await dkimSign(message, { ...signatureData[0]!, signatureData });
    const raw = Buffer.concat([Buffer.from(signed.signatures), message]);
    const resolver = new CountingResolver(zones);
    const port = await start(resolver);
    const client = new Client(port);
    await client.reply();
    await client.send('EHLO mail.google.com');
    await client.send('MAIL FROM:<noreply-dmarc-support@google.com>');
    expect(await client.send('RCPT TO:<dmarc@reports.example>')).toMatch(/^250/);
    expect(await client.send('DATA')).toMatch(/^354/);
    client.socket.write(Buffer.concat([raw, Buffer.from('\r\n.\r\n')]));
    expect(await client.reply()).toMatch(/^250/);
    expect(signed.signatures.match(/DKIM-Signature:/gi)).toHaveLength(30);
    const keyLookups = resolver.queries.filter((q) => q.includes('._domainkey.'));
    expect(keyLookups.length).toBeGreaterThan(0);
    expect(keyLookups.length).toBeLessThanOrEqual(DKIM_SIGNATURES);
    client.socket.destroy();
  }, 30_000);

  it(`refuses connections past ${CONNECTIONS_PER_CLIENT} from one address with 421, and takes them again once some close`, async () => {
    const port = await start(zones);
    const clients = Array.from({ length: CONNECTIONS_PER_CLIENT + 3 }, () => new Client(port));
    const greetings = await Promise.all(clients.map((c) => c.reply()));
    expect(greetings.filter((g) => g?.startsWith('220'))).toHaveLength(CONNECTIONS_PER_CLIENT);
    expect(greetings.filter((g) => g?.startsWith('421'))).toHaveLength(3);
    expect(receiver!.counters.refusedConnections).toBe(3);
    const open = clients.filter((_, n) => greetings[n]?.startsWith('220'));
    await open[0]!.send('QUIT');
    await new Promise((r) => setTimeout(r, 200));
    const again = new Client(port);
    expect(await again.reply()).toMatch(/^220/);
    for (const c of [...clients, again]) c.socket.destroy();
  }, 30_000);

  it('closes a connection idle before MAIL with 421; one that sent MAIL stays', async () => {
    const port = await start(zones, { idleBeforeMailMs: 300 });
    const idle = new Client(port);
    const busy = new Client(port);
    await Promise.all([idle.reply(), busy.reply()]);
    await busy.send('EHLO sender.example');
    await busy.send('MAIL FROM:<a@sender.example>');
    expect(await idle.reply()).toMatch(/^421 .*Idle/);
    expect(idle.closed || (await new Promise((r) => idle.socket.once('close', r)), true)).toBe(true);
    expect(await busy.send('NOOP')).toMatch(/^250/);
    expect(receiver!.counters.idleClosed).toBe(1);
    busy.socket.destroy();
  }, 30_000);

  it('answers 452 to messages past the in-flight byte budget; the others are taken', async () => {
    const port = await start(zones, { maxInFlightBytes: 2 * 1024 * 1024 });
    const body = Buffer.concat([reportMessage({ attachment: Buffer.alloc(1024 * 1024, 0x41), fileName: 'big.bin', contentType: 'application/octet-stream' })]);
    const clients = [new Client(port), new Client(port), new Client(port)];
    for (const c of clients) {
      await c.reply();
      await c.send('EHLO sender.example');
      await c.send('MAIL FROM:<a@sender.example>');
      await c.send('RCPT TO:<dmarc@reports.example>');
      await c.send('DATA');
    }
    // Each sends most of its message, then all finish: three at once hold more than 2 MiB.
    const cut = body.length - 1000;
    for (const c of clients) c.socket.write(body.subarray(0, cut));
    await new Promise((r) => setTimeout(r, 500));
    for (const c of clients) c.socket.write(Buffer.concat([body.subarray(cut), Buffer.from('\r\n.\r\n')]));
    const answers = await Promise.all(clients.map((c) => c.reply()));
    expect(answers.filter((a) => a?.startsWith('452'))).not.toHaveLength(0);
    expect(answers.filter((a) => a?.startsWith('250'))).not.toHaveLength(0);
    expect(receiver!.counters.deferredInFlight).toBe(answers.filter((a) => a?.startsWith('452')).length);
    for (const c of clients) c.socket.destroy();
  }, 30_000);
});
