/**
 * The SMTP report receiver for real on loopback, spoken to in raw SMTP over a socket: report
 * addresses only at RCPT (configured, or in the rua of the domain's DMARC or TLS-RPT record from
 * the zones), 451 when DNS fails, the size cap (552), a DKIM-signed report stored with its
 * authenticated reporter, an unsigned one stored and marked, several organisations (stored for the
 * owner of the domain only, 550 when nobody owns it), and exactly one organisation taking any domain.
 */
import { generateKeyPairSync } from 'node:crypto';
import { openSmtp } from '../support/smtp-client.js';
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dkimSign } from 'mailauth';
import { loadZoneDirectory, parseZone, ZoneResolver, type Resolver } from '@spoof-checker/engine';
import { SmtpReportReceiver } from '../../src/ingest/smtp.js';
import { startService } from '../../src/service/start.js';
import { createMemoryStores } from '../../src/store/memory.js';
import type { Domain, Stores } from '../../src/store/types.js';
import { FIXTURE_ZONES } from '../cli/helpers.js';
import { fixture, GOOGLE_ZIP, REPORT_DOMAIN, REPORT_SOURCES, reportMessage, TLS_GZ } from './helpers.js';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE_PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const PUBLIC_B64 = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');

/** The reporter's zone (its DKIM key and DMARC record) and the service's (rua addresses). */
function testZones(): string[] {
  const key = PUBLIC_B64.match(/.{1,200}/g)!.map((chunk) => `"${chunk}"`).join(' ');
  return [
    `$ORIGIN google.com.\n$TTL 300\n@ IN SOA ns1 host 1 7200 900 1209600 300\n@ IN NS ns1\ns1._domainkey IN TXT ( "v=DKIM1; k=rsa; p=" ${key} )\n_dmarc IN TXT "v=DMARC1; p=reject"\n`,
    `$ORIGIN reports.example.\n$TTL 300\n@ IN SOA ns1 host 1 7200 900 1209600 300\n@ IN NS ns1\n_dmarc IN TXT "v=DMARC1; p=none; rua=mailto:dmarc@reports.example,mailto:other@elsewhere.example"\n_smtp._tls IN TXT "v=TLSRPTv1; rua=mailto:tls%2Breports@reports.example,https://reports.example/tlsrpt"\n`,
  ];
}

let resolver: Resolver;
beforeAll(async () => {
  const zones = await loadZoneDirectory(FIXTURE_ZONES);
  resolver = new ZoneResolver([...zones, ...testZones().map((text) => parseZone(text))]);
});

/** One SMTP conversation: each command's reply (the whole reply, multi-line replies joined). */
async function smtp(port: number, steps: { mailFrom: string; rcpts: string[]; data?: Buffer }): Promise<{ greeting: string; rcpt: string[]; data: string | null }> {
  const { socket, reply, send } = openSmtp(port);
  const greeting = await reply();
  await send('EHLO reporter.test');
  await send(`MAIL FROM:<${steps.mailFrom}>`);
  const rcpt: string[] = [];
  for (const to of steps.rcpts) rcpt.push(await send(`RCPT TO:<${to}>`));
  let data: string | null = null;
  if (steps.data && rcpt.some((r) => r.startsWith('250'))) {
    const go = await send('DATA');
    if (go.startsWith('354')) {
      const body = steps.data.toString('latin1').replace(/\r?\n/g, '\r\n').replace(/^\./gm, '..');
      const r = reply();
      socket.write(`${body}${body.endsWith('\r\n') ? '' : '\r\n'}.\r\n`, 'latin1');
      data = await r;
    } else data = go;
  }
  await send('QUIT');
  socket.end();
  return { greeting, rcpt, data };
}

async function signed(message: Buffer): Promise<Buffer> {
  const { signatures } = await dkimSign(message, { signatureData: [{ signingDomain: 'google.com', selector: 's1', privateKey: PRIVATE_PEM }] } as Parameters<typeof dkimSign>[1]);
  return Buffer.concat([Buffer.from(signatures), message]);
}

const at = '2026-01-01T00:00:00.000Z';
const domainRow = (id: string, organizationId: string, name: string): Domain => ({
  id, organizationId, domain: name, status: 'verified', userVerifiedDomain: true, systemVerified: true, customReturnPath: null, trackingSubdomain: null,
  isClickTrackingEnabled: false, isOpenTrackingEnabled: false, tls: 'opportunistic', isTrackingDomain: false, isSendingEmailEnabled: true,
  isReceivingEmailEnabled: false, verificationFailedReason: null, dnsRecords: [], lastVerifiedAt: null, createdAt: at, updatedAt: at, deletedAt: null,
});

describe('SMTP report receiver on loopback', () => {
  let receiver: SmtpReportReceiver | undefined;
  let stores: Stores;
  afterEach(async () => {
    await receiver?.stop();
    receiver = undefined;
  });

  async function start(options: { orgs: string[]; domains?: [string, string][]; maxMessageBytes?: number; resolver?: Resolver }): Promise<number> {
    stores = createMemoryStores();
    for (const id of options.orgs) await stores.apiKeys.addOrganization({ id, name: id });
    for (const [i, [org, name]] of (options.domains ?? []).entries()) await stores.domains.add(domainRow(`d${i}`, org, name));
    receiver = new SmtpReportReceiver({
      store: stores.reports,
      resolver: options.resolver ?? resolver,
      reportAddresses: ['Configured@Service.example'],
      port: 0,
      ...(options.maxMessageBytes ? { maxMessageBytes: options.maxMessageBytes } : {}),
    });
    return (await receiver.start()).port;
  }

  it('accepts only report addresses at RCPT: configured, or in the rua of the DMARC or TLS-RPT record of their domain', async () => {
    const port = await start({ orgs: ['o1'] });
    const session = await smtp(port, {
      mailFrom: 'noreply-dmarc-support@google.com',
      rcpts: ['configured@service.example', 'dmarc@reports.example', 'tls+reports@reports.example', 'dmarc-reports@spf-cloud-ec2.example', 'postmaster@reports.example', 'other@elsewhere.example', 'x@no-such-domain.example'],
    });
    expect(session.greeting).toMatch(/^220 /);
    expect(session.rcpt.map((r) => r.slice(0, 3))).toEqual(['250', '250', '250', '250', '550', '550', '550']);
    expect(session.rcpt[4]).toContain('is not a report address here');
    expect(receiver!.counters.refusedRecipients).toBe(3);
  });

  it('a DNS failure deciding a recipient is 451 (try later), never a refusal', async () => {
    const failing: Resolver = { resolve: async () => ({ kind: 'error', reason: 'servfail' }) };
    const port = await start({ orgs: ['o1'], resolver: failing });
    const session = await smtp(port, { mailFrom: 'a@b.example', rcpts: ['dmarc@reports.example', 'configured@service.example'] });
    expect(session.rcpt[0]).toMatch(/^451 /);
    expect(session.rcpt[1]).toMatch(/^250 /);
  });

  it('stores a DKIM-signed report with its authenticated reporter, and an unsigned one marked as not authenticated', async () => {
    const port = await start({ orgs: ['o1'] });
    const message = reportMessage({ attachment: fixture(GOOGLE_ZIP), fileName: GOOGLE_ZIP, contentType: 'application/zip' });
    const first = await smtp(port, { mailFrom: 'noreply-dmarc-support@google.com', rcpts: ['dmarc@reports.example'], data: await signed(message) });
    expect(first.data).toMatch(/^250 .*1 report\(s\) stored/);
    const [stored] = (await stores.reports.list('o1', { page: 1, limit: 10 })).items;
    expect(stored).toMatchObject({ reporter: 'google.com', domain: REPORT_DOMAIN, origin: { channel: 'smtp', authenticatedDomain: 'google.com', dkim: 'pass', dmarc: 'pass', sender: 'noreply-dmarc-support@google.com' } });
    // The same report, unsigned (a forgery could look like this): stored apart, marked, never merged with the authenticated one.
    const forged = await smtp(port, { mailFrom: 'noreply-dmarc-support@google.com', rcpts: ['dmarc@reports.example'], data: message });
    expect(forged.data).toMatch(/^250 .*1 report\(s\) stored/);
    expect(await stores.reports.counts('o1', REPORT_DOMAIN, null)).toMatchObject({ aggregate: 2, unauthenticated: 1 });
    // The signed one again: a duplicate.
    const again = await smtp(port, { mailFrom: 'noreply-dmarc-support@google.com', rcpts: ['dmarc@reports.example'], data: await signed(message) });
    expect(again.data).toMatch(/^250 .*0 report\(s\) stored, 1 duplicate/);
    expect(receiver!.counters).toMatchObject({ messages: 3, stored: 2, duplicates: 1 });
  });

  it('refuses a message over the size cap with 552 and stores nothing', async () => {
    const port = await start({ orgs: ['o1'], maxMessageBytes: 500 });
    const message = reportMessage({ attachment: fixture(GOOGLE_ZIP), fileName: GOOGLE_ZIP, contentType: 'application/zip' });
    const session = await smtp(port, { mailFrom: 'a@google.com', rcpts: ['dmarc@reports.example'], data: message });
    expect(session.data).toMatch(/^552 /);
    expect(receiver!.counters.tooLarge).toBe(1);
    expect((await stores.reports.list('o1', { page: 1, limit: 10 })).total).toBe(0);
  });

  it('several organisations: stored for the one that added the domain; 550 (counted) when none has', async () => {
    const port = await start({ orgs: ['o1', 'o2'], domains: [['o2', REPORT_DOMAIN]] });
    const aggregate = reportMessage({ attachment: fixture(GOOGLE_ZIP), fileName: GOOGLE_ZIP, contentType: 'application/zip' });
    const ok = await smtp(port, { mailFrom: 'a@google.com', rcpts: ['dmarc@reports.example'], data: aggregate });
    expect(ok.data).toMatch(/^250 /);
    expect((await stores.reports.list('o2', { page: 1, limit: 10 })).total).toBe(1);
    expect((await stores.reports.list('o1', { page: 1, limit: 10 })).total).toBe(0);
    await stores.domains.softDelete('o2', 'd0', at);
    const refused = await smtp(port, { mailFrom: 'a@google.com', rcpts: ['dmarc@reports.example'], data: reportMessage({ attachment: fixture(TLS_GZ), fileName: TLS_GZ, contentType: 'application/tlsrpt+gzip' }) });
    expect(refused.data).toMatch(/^550 .*No organisation here takes reports for spf-cloud-ec2\.example/);
    expect(receiver!.counters.refusedNoOrganization).toBe(1);
  });

  it('exactly one organisation takes reports for any domain, TLS reports included', async () => {
    const port = await start({ orgs: ['only'] });
    const session = await smtp(port, { mailFrom: 'tlsrpt@microsoft.com', rcpts: ['tls+reports@reports.example'], data: reportMessage({ from: 'tlsrpt@microsoft.com', attachment: fixture(TLS_GZ), fileName: TLS_GZ, contentType: 'application/tlsrpt+gzip' }) });
    expect(session.data).toMatch(/^250 /);
    expect(await stores.reports.counts('only', null, null)).toMatchObject({ tls: 1, aggregate: 0 });
  });
});

describe('serve --smtp-port: the receiver as a component of startService', () => {
  it('starts after the store and before the HTTP app, takes a report by SMTP, and the API shows it to the organisation', async () => {
    const lines: string[] = [];
    const key = 'sk_reports_f791dcc4cce195d7df12c75104aa1d70';
    const handle = await startService({
      storage: { kind: 'memory' },
      check: { resolverFor: () => resolver },
      allowPrivateAddresses: false,
      env: {},
      log: (line) => void lines.push(line),
      reports: { reportAddresses: ['dmarc@reports.service.example'], smtp: { host: '127.0.0.1', port: 0 } },
      http: { host: '127.0.0.1', port: 0, apiKeys: [{ key, organizationId: 'org_r' }], rateLimit: false, trustProxy: false, publicHistory: false, environment: 'test', logger: false },
    });
    try {
      expect(handle.components.map((c) => c.name)).toEqual(['store', 'batches', 'lookalike jobs', 'monitors', 'smtp', 'http']);
      const note = handle.notes.find((n) => n.startsWith('SMTP report receiver on 127.0.0.1:'));
      expect(note).toBeDefined();
      const port = Number(/127\.0\.0\.1:(\d+)/.exec(note!)![1]);
      const session = await smtp(port, { mailFrom: 'noreply-dmarc-support@google.com', rcpts: ['dmarc@reports.service.example'], data: await signed(reportMessage({ attachment: fixture(GOOGLE_ZIP), fileName: GOOGLE_ZIP, contentType: 'application/zip' })) });
      expect(session.data).toMatch(/^250 /);
      const response = await fetch(`http://127.0.0.1:${handle.port}/api/tools/v1/spoof-checker/reports`, { headers: { authorization: `Bearer ${key}` } });
      const body = (await response.json()) as { total: number; reports: { reporter: string; authenticated: boolean; origin: { channel: string } }[] };
      expect(body.total).toBe(1);
      expect(body.reports[0]).toMatchObject({ reporter: 'google.com', authenticated: true, origin: { channel: 'smtp' } });
    } finally {
      const outcomes = await handle.stop();
      expect(outcomes.map((o) => o.name)).toEqual(['http', 'smtp', 'monitors', 'lookalike jobs', 'batches', 'store']);
    }
  });
});

describe('keys in reports that arrive by SMTP (issue 38 item 9)', () => {
  it("a key in a mailed report's org_name is stored and shown as [REDACTED], as at the API's upload", async () => {
    const key = 'sk_reports_0a1b2c3d4e5f60718293a4b5c6d7e8f9';
    const xml = readFileSync(`${REPORT_SOURCES}yahoo.com!spf-cloud-ec2.example!1795132800!1795219199.xml`, 'utf8').replace(
      '<org_name>Yahoo</org_name>',
      `<org_name>Yahoo ${Buffer.from(key).toString('hex')}</org_name>`,
    );
    const handle = await startService({
      storage: { kind: 'memory' },
      check: { resolverFor: () => resolver },
      allowPrivateAddresses: false,
      env: {},
      log: () => {},
      reports: { reportAddresses: ['dmarc@reports.service.example'], smtp: { host: '127.0.0.1', port: 0 } },
      http: { host: '127.0.0.1', port: 0, apiKeys: [{ key, organizationId: 'org_r' }], rateLimit: false, trustProxy: false, publicHistory: false, environment: 'test', logger: false },
    });
    try {
      const port = Number(/127\.0\.0\.1:(\d+)/.exec(handle.notes.find((n) => n.startsWith('SMTP report receiver on'))!)![1]);
      const message = reportMessage({ from: 'noreply@yahoo.com', attachment: Buffer.from(xml), fileName: 'yahoo.xml', contentType: 'text/xml' });
      const session = await smtp(port, { mailFrom: 'noreply@yahoo.com', rcpts: ['dmarc@reports.service.example'], data: message });
      expect(session.data).toMatch(/^250 /);
      const response = await fetch(`http://127.0.0.1:${handle.port}/api/tools/v1/spoof-checker/reports`, { headers: { authorization: `Bearer ${key}` } });
      const text = await response.text();
      expect(text).toContain('"total":1');
      expect(text).toContain('[REDACTED]');
      expect(text.toLowerCase()).not.toContain(Buffer.from(key).toString('hex'));
    } finally {
      await handle.stop();
    }
  });
});

describe('serve flags for the receiver', () => {
  it('--smtp-port, --smtp-host and --report-address (repeatable, comma-separated, from the environment), each checked', async () => {
    const { serveConfig } = await import('../../src/cli/serve.js');
    const config = serveConfig(['--smtp-port', '2525', '--report-address', 'DMARC@Reports.Example,tls@reports.example', '--report-address', 'x@y.example'], {});
    expect(config !== 'help' && config.reports).toEqual({ reportAddresses: ['dmarc@reports.example', 'tls@reports.example', 'x@y.example'], smtp: { host: '127.0.0.1', port: 2525 } });
    const fromEnv = serveConfig(['--host', '::'], { SPOOF_CHECKER_SMTP_PORT: '0', SPOOF_CHECKER_REPORT_ADDRESS: 'a@b.example' });
    expect(fromEnv !== 'help' && fromEnv.reports).toEqual({ reportAddresses: ['a@b.example'], smtp: { host: '::', port: 0 } });
    expect(() => serveConfig(['--report-address', 'not-an-address'], {})).toThrow(/--report-address must be an address/);
    expect(() => serveConfig(['--smtp-port', '70000'], {})).toThrow(/--smtp-port must be a whole number/);
    const none = serveConfig([], {});
    expect(none !== 'help' && none.reports).toBeUndefined();
  });
});
