/**
 * The one atomic write (src/cli/atomic-file.ts) every command uses: a temporary name nobody can
 * guess, created exclusively beside the target, then renamed over it; names planted in advance
 * (files, symlinks, the old predictable `<out>.<pid>.tmp`) are neither followed nor touched.
 */
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { temporaryNameFor, writeFileAtomically } from '../../src/cli/atomic-file.js';

const work = mkdtempSync(join(tmpdir(), 'spoof-checker-atomic-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('writeFileAtomically', () => {
  it('names the temporary file beside the target, hidden, with 128 random bits: never the same twice', () => {
    const target = join(work, 'data.json');
    const names = new Set(Array.from({ length: 1000 }, () => temporaryNameFor(target)));
    expect(names.size).toBe(1000);
    for (const name of [...names].slice(0, 5)) {
      expect(dirname(name)).toBe(work);
      expect(basename(name)).toMatch(/^\.data\.json\.[0-9a-f]{32}\.tmp$/);
    }
  });

  it('replaces the target (from a string and from pieces) and leaves no temporary file', async () => {
    const target = join(work, 'replace.txt');
    writeFileSync(target, 'old\n');
    await writeFileAtomically(target, 'new\n');
    expect(readFileSync(target, 'utf8')).toBe('new\n');
    await writeFileAtomically(target, (async function* () {
      for (let i = 0; i < 20_000; i++) yield `line ${i}\n`;
    })());
    expect(readFileSync(target, 'utf8').split('\n')).toHaveLength(20_001);
    expect(readdirSync(work).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('succeeds with files and symlinks planted at the old predictable names, and leaves them and what they point at untouched', async () => {
    const dir = mkdtempSync(join(work, 'planted-'));
    const target = join(dir, 'out.json');
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'precious\n');
    const planted = [`${target}.${process.pid}.tmp`, `${target}.resume-${process.pid}.tmp`, `${target}.tmp`];
    symlinkSync(victim, planted[0]!);
    symlinkSync(victim, planted[1]!);
    writeFileSync(planted[2]!, 'someone else\n');
    await writeFileAtomically(target, 'written\n');
    expect(readFileSync(target, 'utf8')).toBe('written\n');
    expect(lstatSync(target).isSymbolicLink()).toBe(false);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(readlinkSync(planted[0]!)).toBe(victim);
    expect(readlinkSync(planted[1]!)).toBe(victim);
    expect(readFileSync(planted[2]!, 'utf8')).toBe('someone else\n');
  });

  it('on failure leaves the target as it was and removes its temporary file', async () => {
    const dir = mkdtempSync(join(work, 'fail-'));
    const target = join(dir, 'keep.txt');
    writeFileSync(target, 'before\n');
    const failing = (async function* () {
      yield 'half';
      throw new Error('the source broke');
    })();
    await expect(writeFileAtomically(target, failing)).rejects.toThrow('the source broke');
    expect(readFileSync(target, 'utf8')).toBe('before\n');
    expect(readdirSync(dir)).toEqual(['keep.txt']);
  });

  it('fails with the reason when the directory cannot be written, and creates nothing', async () => {
    await expect(writeFileAtomically(join(work, 'no-such-dir', 'x.json'), 'x')).rejects.toThrow(/ENOENT/);
  });
});
