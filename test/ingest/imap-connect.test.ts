/**
 * The IMAP fetch when the mailbox's server cannot be reached: a closed port on loopback is a recorded
 * outcome (`connect-failed`, kind `refused`), not a throw, and `reports fetch` says that the server
 * cannot be reached and what to check, exit 1, nothing stored.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { fetchReportsFromImap, parseImapUrl } from '../../src/ingest/imap.js';
import { reportSink } from '../../src/ingest/ingest.js';
import { openSqliteStores } from '../../src/store/sqlite.js';
import { captureIo } from '../cli/helpers.js';
import { closedTcpPort } from '../../packages/engine/test/support/closed-port.js';

const work = mkdtempSync(join(tmpdir(), 'imap-connect-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const closedPort = closedTcpPort;

describe('the IMAP fetch against a closed port', () => {
  it('returns connect-failed, kind refused, with the socket words; it does not throw', async () => {
    const port = await closedPort();
    const parsed = parseImapUrl(`imap://reports:secret@127.0.0.1:${port}/INBOX`);
    if (!parsed.ok) throw new Error(parsed.problem);
    const { stores } = await openSqliteStores(join(work, 'direct'), { pruneAutomatically: false });
    try {
      const result = await fetchReportsFromImap({ target: parsed.target, sink: await reportSink(stores.reports, { organizationId: 'default' }) });
      expect(result).toEqual({ outcome: 'connect-failed', kind: 'refused', detail: expect.stringMatching(/ECONNREFUSED/) });
    } finally {
      await stores.close();
    }
  });

  it('reports fetch says the server cannot be reached and to check --imap, exit 1', async () => {
    const port = await closedPort();
    const { io, stderr } = captureIo();
    io.env = {};
    const code = await main(['reports', 'fetch', '--imap', `imap://reports:secret@127.0.0.1:${port}/INBOX`, '--data', join(work, 'cli')], io);
    expect(code).toBe(1);
    expect(stderr()).toMatch(new RegExp(`^spoof-checker reports fetch: imap://reports@127\\.0\\.0\\.1:${port}/INBOX: the IMAP server 127\\.0\\.0\\.1:${port} cannot be reached: nothing listens at that port \\(.*ECONNREFUSED.*\\); check the host and port of --imap \\[refused\\]\\n$`));
    expect(stderr()).not.toContain('secret');
  });
});
