/**
 * `spoof-checker reports fetch --imap` against a real Dovecot on loopback (Debian `dovecot-imapd`):
 * STARTTLS (imap://) and TLS (imaps://), the certificate verified against the test CA given with
 * --tls-ca (and refused without it), the password from SPOOF_CHECKER_IMAP_PASSWORD, processed
 * messages moved so that a second fetch adds nothing, a message without a report moved aside and
 * counted (exit 0).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImapFlow } from 'imapflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { openSqliteStores } from '../../src/store/sqlite.js';
import { captureIo } from '../cli/helpers.js';
import { startDovecot, type Dovecot } from './dovecot.js';
import { fixture, GOOGLE_ZIP, noReportMessage, OUTLOOK_GZ, reportMessage, TLS_GZ, YAHOO_GZ } from './helpers.js';

let dovecot: Dovecot;
const work = mkdtempSync(join(tmpdir(), 'reports-imap-'));

beforeAll(async () => {
  dovecot = await startDovecot();
}, 60_000);
afterAll(async () => {
  await dovecot?.stop();
  rmSync(work, { recursive: true, force: true });
});

async function client(): Promise<ImapFlow> {
  const c = new ImapFlow({
    host: '127.0.0.1',
    port: dovecot.imapsPort,
    secure: true,
    auth: { user: dovecot.user, pass: dovecot.password },
    tls: { ca: [readFileSync(dovecot.caFile, 'utf8')] },
    logger: false,
  });
  c.on('error', () => undefined);
  await c.connect();
  return c;
}

async function deliver(messages: Buffer[]): Promise<void> {
  const c = await client();
  try {
    for (const m of messages) await c.append('INBOX', m);
  } finally {
    await c.logout();
  }
}

async function folderSizes(): Promise<Record<string, number>> {
  const c = await client();
  try {
    const sizes: Record<string, number> = {};
    for (const box of await c.list()) {
      const status = await c.status(box.path, { messages: true });
      sizes[box.path] = status === false ? -1 : (status.messages ?? 0);
    }
    return sizes;
  } finally {
    await c.logout();
  }
}

async function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  const { io, stdout, stderr } = captureIo();
  io.env = env;
  const code = await main(args, io);
  return { code, out: stdout(), err: stderr() };
}

describe('reports fetch --imap (Dovecot)', () => {
  const data = join(work, 'data');

  it('imap:// with STARTTLS: every report stored, processed messages moved, a message without a report moved aside and counted', async () => {
    await deliver([
      reportMessage({ attachment: fixture(GOOGLE_ZIP), fileName: GOOGLE_ZIP, contentType: 'application/zip' }),
      noReportMessage(),
      reportMessage({ from: 'dmarc@yahoo.com', messageId: '<y@yahoo.com>', attachment: fixture(YAHOO_GZ), fileName: YAHOO_GZ, contentType: 'application/gzip' }),
      reportMessage({ from: 'tlsrpt@microsoft.com', messageId: '<t@microsoft.com>', attachment: fixture(TLS_GZ), fileName: TLS_GZ, contentType: 'application/tlsrpt+gzip' }),
    ]);
    const url = `imap://${dovecot.user}:${dovecot.password}@127.0.0.1:${dovecot.imapPort}/INBOX`;
    const first = await run(['reports', 'fetch', '--imap', url, '--tls-ca', dovecot.caFile, '--data', data]);
    expect(first.err).toMatch(/4 message\(s\): 3 report\(s\) stored, 0 duplicate\(s\), 0 refused, 1 without a report/);
    expect(first.code).toBe(0);
    expect(await folderSizes()).toMatchObject({ INBOX: 0, 'spoof-checker-processed': 3, 'spoof-checker-no-report': 1 });
    const { stores } = await openSqliteStores(data, { pruneAutomatically: false });
    try {
      expect(await stores.reports.counts('default', null, null)).toMatchObject({ aggregate: 2, tls: 1 });
      const [one] = (await stores.reports.list('default', { page: 1, limit: 1, kind: 'tls' })).items;
      expect(one?.origin).toMatchObject({ channel: 'imap', sender: 'tlsrpt@microsoft.com', spf: 'none' });
    } finally {
      await stores.close();
    }
    // A second fetch finds nothing new.
    const second = await run(['reports', 'fetch', '--imap', url, '--tls-ca', dovecot.caFile, '--data', data]);
    expect(second.err).toMatch(/^0 message\(s\): 0 report\(s\) stored/m);
    expect(second.code).toBe(0);
  });

  it('imaps:// with the password from SPOOF_CHECKER_IMAP_PASSWORD; a report delivered twice is a duplicate', async () => {
    await deliver([reportMessage({ attachment: fixture(GOOGLE_ZIP), fileName: GOOGLE_ZIP, contentType: 'application/zip' }), reportMessage({ from: 'dmarcreport@microsoft.com', attachment: fixture(OUTLOOK_GZ), fileName: OUTLOOK_GZ, contentType: 'application/gzip' })]);
    const url = `imaps://${dovecot.user}@127.0.0.1:${dovecot.imapsPort}/INBOX`;
    const result = await run(['reports', 'fetch', '--imap', url, '--tls-ca', dovecot.caFile, '--data', data], { SPOOF_CHECKER_IMAP_PASSWORD: dovecot.password });
    expect(result.err).toMatch(/2 message\(s\): 1 report\(s\) stored, 1 duplicate\(s\)/);
    expect(result.code).toBe(0);
  });

  it('refuses a certificate it cannot verify (no --tls-ca), a wrong password, and a URL without a password', async () => {
    const untrusted = await run(['reports', 'fetch', '--imap', `imaps://${dovecot.user}:${dovecot.password}@127.0.0.1:${dovecot.imapsPort}/INBOX`, '--data', data]);
    expect(untrusted.code).toBe(1);
    expect(untrusted.err).toMatch(/certificate|self.signed|issuer/i);
    expect(untrusted.err).toMatch(/TLS with the IMAP server .* failed .*--tls-ca FILE \[tls\]/);
    const wrong = await run(['reports', 'fetch', '--imap', `imap://${dovecot.user}:nope@127.0.0.1:${dovecot.imapPort}/INBOX`, '--tls-ca', dovecot.caFile, '--data', data]);
    expect(wrong.code).toBe(1);
    expect(wrong.err).toMatch(/refused the login of .* \[login\]/);
    const missing = await run(['reports', 'fetch', '--imap', `imap://${dovecot.user}@127.0.0.1:${dovecot.imapPort}/INBOX`, '--data', data]);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('SPOOF_CHECKER_IMAP_PASSWORD');
  });
});
