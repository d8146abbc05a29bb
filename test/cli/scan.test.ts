import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { CSV_COLUMNS } from '../../src/cli/scan.js';
import { captureIo, ZONES } from './helpers.js';

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

    writeFileSync(list, `${NAMES}\nnew.example\n`);
    const second = captureIo();
    await main(['scan', list, '--zones', ZONES, '--format', 'csv', '--out', out], second.io);
    const after = readFileSync(out, 'utf8').trimEnd().split('\n');
    expect(after).toHaveLength(6);
    expect(after[5]).toMatch(/^new\.example,new\.example,spoofable,/);
    expect(second.stderr()).toMatch(/1 checked .*4 skipped \(already in the output\)/);
  });

  it('draws progress with rate and ETA when stderr is a terminal', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scan-'));
    const list = join(dir, 'names.txt');
    writeFileSync(list, Array.from({ length: 40 }, (_, i) => `n${i}.demo.example`).join('\n'));
    const { io, stderr } = captureIo('', { tty: true });
    await main(['scan', list, '--zones', ZONES, '--concurrency', '1'], io);
    expect(stderr()).toMatch(/scan: \d+\/40 checked, \d+\/s, 0 failed ETA \d+s/);
  });

  it.each([
    [['scan'], /exactly one input/],
    [['scan', '-', '--format', 'xml'], /--format must be jsonl or csv/],
    [['scan', '-', '--concurrency', '0'], /--concurrency must be a whole number from 1/],
    [['scan', '/no/such/file'], /cannot read/],
  ])('refuses %j with exit 2', async (args, message) => {
    const { io, stderr } = captureIo();
    expect(await main(args, io)).toBe(2);
    expect(stderr()).toMatch(message);
  });
});
