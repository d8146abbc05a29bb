import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { CSV_COLUMNS, parseCsvLine, progressLine, showProgress } from '../../src/cli/scan.js';
import { startDnsServer, type RunningDnsServer } from '../../packages/engine/src/zones/server.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { loadZoneDirectory } from '../../packages/engine/src/zones/load.js';
import { captureIo, FIXTURE_ZONES, ZONES } from './helpers.js';

const NAMES = 'demo.example\n# a comment\n\nopen.example\nceo@demo.example\n192.0.2.1\n';

describe('spoof-checker scan', () => {
  it('streams one JSON line per name from stdin, with a summary on stderr', async () => {
    const { io, stdout, stderr } = captureIo(NAMES);
    expect(await main(['scan', '-', '--zones', ZONES, '--concurrency', '2'], io)).toBe(1);
    const lines = stdout().trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.input).sort()).toEqual(['192.0.2.1', 'ceo@demo.example', 'demo.example', 'open.example']);
    const open = lines.find((l) => l.input === 'open.example');
    expect(open).toMatchObject({ verdict: 'spoofable', domain: 'open.example' });
    expect(open.details).toBeUndefined();
    expect(stderr()).toMatch(/scan: 4 checked .*: spoofable 1, partially_protected 0, protected 2; 1 failed \(invalid_domain 1\)/);
  });

  it('keeps details when asked', async () => {
    const { io, stdout } = captureIo('demo.example\n');
    await main(['scan', '-', '--zones', ZONES, '--details'], io);
    expect(JSON.parse(stdout()).details.spf.tree.length).toBeGreaterThan(0);
  });

  it('has a spf_shared_infrastructure CSV column: the severity, then each provider service with IPv4+IPv6 counts', async () => {
    const { io, stdout } = captureIo('spf-ci-runners.example\nspf-cloud-fixed.example\np-reject.example\n');
    await main(['scan', '-', '--zones', FIXTURE_ZONES, '--format', 'csv', '--concurrency', '1'], io);
    const rows = stdout().trimEnd().split('\n').map((line) => parseCsvLine(line)!);
    const column = rows[0]!.indexOf('spf_shared_infrastructure');
    expect(column).toBeGreaterThan(0);
    const byName = new Map(rows.slice(1).map((row) => [row[0], row[column]]));
    expect(byName.get('spf-ci-runners.example')).toBe('critical github/actions=65536+0 azure/AzureCloud=65536+0');
    expect(byName.get('spf-cloud-fixed.example')).toBe('warning aws/EC2=1+0');
    expect(byName.get('p-reject.example')).toBe('');
  });

  it('writes CSV to --out and resumes, skipping names already there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scan-'));
    const list = join(dir, 'names.txt');
    const out = join(dir, 'out.csv');
    writeFileSync(list, NAMES);
    const first = captureIo();
    await main(['scan', list, '--zones', ZONES, '--format', 'csv', '--out', out], first.io);
    const rows = readFileSync(out, 'utf8').trimEnd().split('\n');
    expect(rows[0]).toBe(CSV_COLUMNS.join(','));
    expect(rows).toHaveLength(5);
    expect(rows.find((r) => r.startsWith('open.example,'))).toMatch(/^open\.example,open\.example,spoofable,true,delivered,reject,reject,100,\+all,0,/);

    writeFileSync(list, `${NAMES}\nnew.demo.example\n`);
    const second = captureIo();
    await main(['scan', list, '--zones', ZONES, '--format', 'csv', '--out', out], second.io);
    const after = readFileSync(out, 'utf8').trimEnd().split('\n');
    expect(after).toHaveLength(6);
    expect(after[5]).toMatch(/^new\.demo\.example,new\.demo\.example,spoofable,/);
    expect(second.stderr()).toMatch(/1 checked .*4 skipped \(already in the output\)/);
  });

  it('draws progress (done/total, names/s, ETA) on a terminal, and erases it before the summary', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scan-'));
    const list = join(dir, 'names.txt');
    writeFileSync(list, Array.from({ length: 40 }, (_, i) => `n${i}.demo.example`).join('\n'));
    const { io, stderr } = captureIo('', { tty: true });
    await main(['scan', list, '--zones', ZONES, '--concurrency', '1', '--out', join(dir, 'out.jsonl')], io);
    expect(stderr()).toMatch(/^\r\x1b\[Kscan: 1\/40 checked, \d+ names\/s, 0 failed, ETA \d+s/);
    expect(stderr()).toMatch(/\r\x1b\[Kscan: 40 checked in [\d.]+ s: spoofable 40, partially_protected 0, protected 0; 0 failed\n$/);
  });

  it('draws nothing but the summary when stderr is not a terminal', async () => {
    const { io, stderr } = captureIo('demo.example\nopen.example\n');
    await main(['scan', '-', '--zones', ZONES], io);
    expect(stderr()).toMatch(/^scan: 2 checked in [\d.]+ s: spoofable 1, partially_protected 0, protected 1; 0 failed\n$/);
  });

  it.each([
    // stderrIsTTY, stdoutIsTTY, TERM, --out given → progress?
    [false, false, 'xterm', false, false],
    [false, true, 'xterm', true, false],
    [true, false, 'xterm', false, true], // results piped on, progress on the terminal
    [true, true, 'xterm', false, false], // results on the same terminal would tear the line
    [true, true, 'xterm', true, true], // results into a file
    [true, false, 'dumb', false, false], // a dumb terminal cannot erase the line
  ])('showProgress(stderr tty %s, stdout tty %s, TERM %s, to file %s) is %s', (stderrIsTTY, stdoutIsTTY, TERM, toFile, expected) => {
    expect(showProgress({ stderrIsTTY, stdoutIsTTY, env: { TERM } }, toFile)).toBe(expected);
  });

  it('formats the progress line with the time left when the total is known', () => {
    expect(progressLine({ checked: 500, failed: 3, total: 2000, elapsedMs: 10_000 })).toBe('scan: 500/2000 checked, 50 names/s, 3 failed, ETA 30s');
    expect(progressLine({ checked: 500, failed: 0, total: 200_000, elapsedMs: 10_000 })).toBe('scan: 500/200000 checked, 50 names/s, 0 failed, ETA 1h06m');
    expect(progressLine({ checked: 500, failed: 0, total: undefined, elapsedMs: 10_000 })).toBe('scan: 500 checked, 50 names/s, 0 failed');
  });

  it('stops at once on the stop signal: whole lines only, and the summary says where it stopped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scan-'));
    const list = join(dir, 'names.txt');
    const out = join(dir, 'out.jsonl');
    writeFileSync(list, Array.from({ length: 5000 }, (_, i) => `n${i}.demo.example`).join('\n'));
    let stop!: (signal: string) => void;
    const { io, stderr } = captureIo('', { stop: new Promise((resolve) => (stop = resolve)) });
    const running = main(['scan', list, '--zones', ZONES, '--out', out], io);
    // Stop once some results are in the file.
    while (!existsSync(out) || statSync(out).size < 2000) await new Promise((resolve) => setTimeout(resolve, 5));
    stop('SIGTERM');
    expect(await running).toBe(143);
    const text = readFileSync(out, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const lines = text.trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.length).toBeLessThan(5000);
    expect(lines.every((line) => line.verdict === 'spoofable')).toBe(true); // no cancelled check written as a failure
    expect(stderr()).toMatch(new RegExp(`^scan: stopped by SIGTERM at line \\d+ of ${list.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(the checks in flight were cancelled, not written\\)\n`));
    expect(stderr()).toContain(`scan: ${lines.length} checked in`);
    expect(stderr()).toContain(`scan: run the same command again to resume: names already in ${out} are skipped.`);

    // The resume checks exactly the rest.
    const again = captureIo();
    expect(await main(['scan', list, '--zones', ZONES, '--out', out], again.io)).toBe(0);
    const all = readFileSync(out, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line).input);
    expect(new Set(all).size).toBe(5000);
    expect(all).toHaveLength(5000);
  });

  describe('resume after failed checks', () => {
    let server: RunningDnsServer;
    const names = ['p-reject.example', 'dmarc-servfail.example', '192.0.2.1', 'no-such-name.example', 'p-none.example'];

    beforeAll(async () => {
      server = await startDnsServer({ resolver: new ZoneResolver(await loadZoneDirectory(FIXTURE_ZONES)), port: 0, outsideZones: 'nxdomain' });
    });
    afterAll(async () => {
      await server?.close();
    });

    it.each(['jsonl', 'csv'] as const)('checks names that failed on DNS again (%s), keeps names that can never pass, and leaves one line per name', async (format) => {
      const dir = mkdtempSync(join(tmpdir(), 'scan-'));
      const list = join(dir, 'names.txt');
      const out = join(dir, `out.${format}`);
      writeFileSync(list, `${names.join('\n')}\n`);
      const resolver = `${server.address.host}:${server.address.port}`;
      const args = ['scan', list, '--resolver', resolver, '--timeout', '2000', '--format', format, '--out', out];

      // First run: the DMARC query of dmarc-servfail.example answers SERVFAIL.
      server.setFaults([{ name: '_dmarc.dmarc-servfail.example', type: 'TXT', fault: { kind: 'servfail' } }]);
      const first = captureIo();
      expect(await main(args, first.io)).toBe(1);
      const failures = /; 3 failed \((.*)\)\n$/.exec(first.stderr())?.[1]?.split(', ').sort();
      expect(failures).toEqual(['dns_failure 1', 'domain_not_found 1', 'invalid_domain 1']);

      // Second run: the server is healthy again; only the DNS failure is checked again.
      server.setFaults([]);
      const second = captureIo();
      expect(await main(args, second.io)).toBe(0);
      expect(second.stderr()).toMatch(/^scan: 1 checked in [\d.]+ s: spoofable 0, partially_protected 0, protected 1; 0 failed; 4 skipped \(already in the output\); 1 that failed before checked again\n$/);

      const rows = readFileSync(out, 'utf8').trimEnd().split('\n');
      const entries = format === 'csv' ? rows.slice(1).map((row) => parseCsvLine(row)!) : rows.map((row) => JSON.parse(row));
      const byName = new Map(entries.map((entry) => [format === 'csv' ? entry[0] : entry.input, entry]));
      expect([...byName.keys()].sort()).toEqual([...names].sort());
      expect(entries).toHaveLength(names.length); // the failed line was replaced, not left beside the new one
      if (format === 'csv') {
        expect(rows[0]).toBe(CSV_COLUMNS.join(','));
        expect(byName.get('dmarc-servfail.example')![2]).toBe('protected');
        expect(byName.get('192.0.2.1')![CSV_COLUMNS.indexOf('error_code')]).toBe('invalid_domain');
        expect(byName.get('no-such-name.example')![CSV_COLUMNS.indexOf('error_code')]).toBe('domain_not_found');
      } else {
        expect(byName.get('dmarc-servfail.example')).toMatchObject({ verdict: 'protected' });
        expect(byName.get('192.0.2.1')).toMatchObject({ error: { code: 'invalid_domain' } });
        expect(byName.get('no-such-name.example')).toMatchObject({ error: { code: 'domain_not_found' } });
      }
    });
  });

  it('stops and says so when the output cannot be written (a full disk)', async () => {
    const { io, stderr } = captureIo(Array.from({ length: 2000 }, (_, i) => `n${i}.demo.example`).join('\n'));
    expect(await main(['scan', '-', '--zones', ZONES, '--out', '/dev/full'], io)).toBe(1);
    expect(stderr()).toMatch(/spoof-checker scan: cannot write \/dev\/full: ENOSPC: no space left on device/);
    expect(stderr()).not.toMatch(/^\s+at /m);
  });

  it('drops a last line cut short by a killed run and checks that name again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scan-'));
    const list = join(dir, 'names.txt');
    const out = join(dir, 'out.jsonl');
    writeFileSync(list, 'demo.example\nopen.example\n');
    writeFileSync(out, `${JSON.stringify({ input: 'demo.example', domain: 'demo.example', verdict: 'protected' })}\n{"input":"open.exa`);
    const { io, stderr } = captureIo();
    expect(await main(['scan', list, '--zones', ZONES, '--out', out], io)).toBe(0);
    expect(stderr()).toMatch(/1 checked .*1 skipped/);
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((line) => line.input)).toEqual(['demo.example', 'open.example']);
  });

  it('rewrites the resume file through a fresh temporary file: links and files planted at the old names stay untouched', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scan-'));
    const list = join(dir, 'names.txt');
    const out = join(dir, 'out.jsonl');
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'precious\n');
    writeFileSync(list, 'demo.example\nopen.example\n');
    // A cut-short last line makes the resume rewrite the file.
    writeFileSync(out, `${JSON.stringify({ input: 'demo.example', domain: 'demo.example', verdict: 'protected' })}\n{"input":"open.exa`);
    symlinkSync(victim, `${out}.resume-${process.pid}.tmp`);
    symlinkSync(victim, `${out}.${process.pid}.tmp`);
    writeFileSync(`${out}.tmp`, 'someone else\n');
    const { io } = captureIo();
    expect(await main(['scan', list, '--zones', ZONES, '--out', out], io)).toBe(0);
    expect(readFileSync(out, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line).input)).toEqual(['demo.example', 'open.example']);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(readlinkSync(`${out}.resume-${process.pid}.tmp`)).toBe(victim);
    expect(readlinkSync(`${out}.${process.pid}.tmp`)).toBe(victim);
    expect(readFileSync(`${out}.tmp`, 'utf8')).toBe('someone else\n');
    expect(readdirSync(dir).filter((f) => f.startsWith('.'))).toEqual([]);
  });

  it.each([
    ['jsonl', 'notes about the scan\nmore notes\n'],
    ['jsonl', `${JSON.stringify({ input: 'demo.example', verdict: 'protected' })}\n{"input":"cut\n${JSON.stringify({ input: 'open.example', verdict: 'spoofable' })}\n`],
    ['csv', 'name,score\nexample.com,3\n'],
  ])('refuses to resume from a %s file it did not write, and leaves it untouched', async (format, text) => {
    const dir = mkdtempSync(join(tmpdir(), 'scan-'));
    const out = join(dir, 'mine.txt');
    writeFileSync(out, text);
    const { io, stdout, stderr } = captureIo('demo.example\n');
    expect(await main(['scan', '-', '--zones', ZONES, '--format', format, '--out', out], io)).toBe(2);
    expect(stderr()).toMatch(new RegExp(`^spoof-checker scan: cannot resume from ${out}: line \\d+ is not a (JSON line|CSV row) this command writes; resume only from a file a scan wrote`));
    expect(stdout()).toBe('');
    expect(readFileSync(out, 'utf8')).toBe(text);
  });

  it.each([
    ['a,b,c', ['a', 'b', 'c']],
    ['"a,1","b ""q""",', ['a,1', 'b "q"', '']],
    ['"",x', ['', 'x']],
    ['"open', undefined],
    ['"a"b', undefined],
  ])('parseCsvLine(%j) is %j', (line, cells) => {
    expect(parseCsvLine(line)).toEqual(cells);
  });

  it.each([
    [['scan'], /exactly one input/],
    [['scan', '-', '--format', 'xml'], /--format must be jsonl or csv/],
    [['scan', '-', '--concurrency', '0'], /--concurrency must be a whole number from 1/],
    [['scan', '/no/such/file'], /cannot read/],
    [['scan', '-', '--out', tmpdir()], /--out .* is a directory; give a file name in it/],
  ])('refuses %j with exit 2', async (args, message) => {
    const { io, stderr } = captureIo();
    expect(await main(args, io)).toBe(2);
    expect(stderr()).toMatch(message);
  });
});
