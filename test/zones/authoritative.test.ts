/**
 * The fixture zones use only standard RFC 1035 syntax, so a real authoritative server loads them
 * unchanged. NSD's own checker (`nsd-checkzone`, Debian package nsd) reads every file. CI installs it
 * (.ci/run); on a machine without it the test is skipped, visibly, except under CI where that fails.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const DIR = new URL('../../fixtures/zones/', import.meta.url).pathname;
const files = readdirSync(DIR).filter((f) => f.endsWith('.zone')).sort();
const available = spawnSync('nsd-checkzone', ['-h'], { encoding: 'utf8' }).error === undefined;

describe('fixture zones load in NSD', () => {
  it('has nsd-checkzone when running under CI', () => {
    if (process.env.CI) expect(available, 'nsd-checkzone is missing: .ci/run installs the nsd package').toBe(true);
  });

  const check = available ? it.each(files) : it.skip.each(files);
  check('%s is accepted by nsd-checkzone', (file) => {
    const origin = /^\$ORIGIN\s+(\S+)/m.exec(readFileSync(`${DIR}${file}`, 'utf8'))?.[1];
    expect(origin, 'every fixture zone starts with $ORIGIN').toBeDefined();
    const output = execFileSync('nsd-checkzone', [origin!, `${DIR}${file}`], { encoding: 'utf8' });
    expect(output).toContain(`zone ${origin} is ok`);
  });
});
