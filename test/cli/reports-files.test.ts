/**
 * Issue 42, items 4 and 5: `reports import` refuses a file that is not a report (empty, random bytes,
 * parsedmarc's `samples/empty.xml`), whatever its name or extension, with the reason and exit 1 (not
 * 0, not the internal-error 70); a run over many files gives each its line and exits 1 when any was
 * refused, and `--help` says that import keeps going. `reports show` without `--org` reads the one
 * organisation holding reports about the domain, and with several it is a usage error listing them.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { EXIT_FAILED } from '../../src/cli/io.js';
import { captureIo } from './helpers.js';
import { REPORT_DOMAIN, REPORT_SOURCES } from '../ingest/helpers.js';

const work = mkdtempSync(join(tmpdir(), 'reports-files-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function run(args: string[]) {
  const { io, stdout, stderr } = captureIo();
  const code = await main(args, io);
  return { code, out: stdout(), err: stderr() };
}

/** Seeded bytes that start like neither a report nor a message (not '<', '{', gzip, zip, nor "Name:"). */
function randomish(n: number): Buffer {
  const bytes = randomBytes(n);
  bytes[0] = 0x00;
  return bytes;
}

/** parsedmarc's samples/empty.xml: an XML declaration and nothing else. */
const PARSEDMARC_EMPTY = '<?xml version="1.0" encoding="UTF-8" ?>\n';

describe('reports import: a file that is not a report is refused, whatever its name', () => {
  it.each([
    ['empty.xml', Buffer.alloc(0), /refused .*empty\.xml: empty: /],
    ['random.xml', randomish(200), /refused .*random\.xml: unknown-format: /],
    ['random.xml.gz', randomish(200), /refused .*random\.xml\.gz: \S+: /],
    ['random.zip', randomish(200), /refused .*random\.zip: \S+: /],
    ['random.json', randomish(200), /refused .*random\.json: \S+: /],
    ['random.eml', randomish(200), /refused .*random\.eml: not-a-message: the file is neither a report nor a mail message/],
    ['empty.eml', Buffer.alloc(0), /refused .*empty\.eml: not-a-message: the file is empty/],
    ['random.bin', randomish(200), /refused .*random\.bin: unknown-format: /],
    ['no-extension', randomish(200), /refused .*no-extension: unknown-format: /],
    ['parsedmarc-empty.xml', Buffer.from(PARSEDMARC_EMPTY), /refused .*parsedmarc-empty\.xml: \S+: /],
  ])('%s: refused with the reason, exit 1', async (name, bytes, line) => {
    const dir = mkdtempSync(join(work, 'one-'));
    writeFileSync(join(dir, name), bytes);
    const result = await run(['reports', 'import', join(dir, name), '--data', join(dir, 'data')]);
    expect(result.out).toMatch(line);
    expect(result.out).not.toMatch(/no report/);
    expect(result.err).toMatch(/1 input\(s\): 0 report\(s\) stored, 0 duplicate\(s\), 1 refused, 0 message\(s\) without a report/);
    expect(result.code).toBe(EXIT_FAILED);
  });

  it('many files: one line each, the good ones stored, exit 1 because one was refused', async () => {
    const dir = mkdtempSync(join(work, 'many-'));
    const inbox = join(dir, 'inbox');
    mkdirSync(inbox);
    copyFileSync(join(REPORT_SOURCES, 'gmx.net!spf-cloud-ec2.example!1795305600!1795391999.xml'), join(inbox, 'a-gmx.xml'));
    writeFileSync(join(inbox, 'b-empty.xml'), '');
    copyFileSync(join(REPORT_SOURCES, 'yahoo.com!spf-cloud-ec2.example!1795132800!1795219199.xml'), join(inbox, 'c-yahoo.xml'));
    const result = await run(['reports', 'import', inbox, '--data', join(dir, 'data')]);
    const lines = result.out.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^stored .*a-gmx\.xml/);
    expect(lines[1]).toMatch(/^refused .*b-empty\.xml: empty: /);
    expect(lines[2]).toMatch(/^stored .*c-yahoo\.xml/);
    expect(result.err).toMatch(/3 input\(s\): 2 report\(s\) stored, 0 duplicate\(s\), 1 refused/);
    expect(result.code).toBe(EXIT_FAILED);
  });

  it('--help states that import keeps going after a refused file, and the exit status', async () => {
    const help = await run(['reports', '--help']);
    expect(help.out).toMatch(/import goes on after a refused file \(as make's --keep-going does/);
    expect(help.out).toMatch(/1 some file was refused/);
  });
});

describe('reports show without --org', () => {
  const source = join(REPORT_SOURCES, 'gmx.net!spf-cloud-ec2.example!1795305600!1795391999.xml');

  it('with one organisation holding reports about the domain, reads that one', async () => {
    const data = join(mkdtempSync(join(work, 'one-org-')), 'data');
    expect((await run(['reports', 'import', source, '--data', data, '--org', 'acme'])).code).toBe(0);
    const shown = await run(['reports', 'show', REPORT_DOMAIN, '--data', data, '--json', '--until', '2026-11-30', '--days', '60']);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.out)).toMatchObject({ reports: 1 });
  });

  it('with several, a usage error that lists them', async () => {
    const data = join(mkdtempSync(join(work, 'two-orgs-')), 'data');
    expect((await run(['reports', 'import', source, '--data', data, '--org', 'acme'])).code).toBe(0);
    expect((await run(['reports', 'import', source, '--data', data, '--org', 'globex'])).code).toBe(0);
    const shown = await run(['reports', 'show', REPORT_DOMAIN, '--data', data]);
    expect(shown.code).toBe(2);
    expect(shown.err).toContain(`2 organisations hold reports about ${REPORT_DOMAIN}: acme, globex. Say which with --org ID`);
    const chosen = await run(['reports', 'show', REPORT_DOMAIN, '--data', data, '--org', 'globex', '--json', '--until', '2026-11-30', '--days', '60']);
    expect(JSON.parse(chosen.out)).toMatchObject({ reports: 1 });
  });
});
