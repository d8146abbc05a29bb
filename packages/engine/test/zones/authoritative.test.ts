/**
 * The fixture zones use only standard RFC 1035 syntax, so a real authoritative server loads them
 * unchanged. NSD's own checker (`nsd-checkzone`, Debian package nsd) reads every file. CI installs it
 * (.ci/run); on a machine without it every file's test fails and says what to install: a missing
 * checker never passes silently.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const DIR = new URL('../../../../fixtures/zones/', import.meta.url).pathname;
const files = readdirSync(DIR).filter((f) => f.endsWith('.zone')).sort();
const available = spawnSync('nsd-checkzone', ['-h'], { encoding: 'utf8' }).error === undefined;

describe('fixture zones load in NSD', () => {
  it.each(files)('%s is accepted by nsd-checkzone', (file) => {
    expect(available, 'nsd-checkzone is missing: install the Debian package nsd (.ci/run does) and run the tests again').toBe(true);
    const origin = /^\$ORIGIN\s+(\S+)/m.exec(readFileSync(`${DIR}${file}`, 'utf8'))?.[1];
    expect(origin, 'every fixture zone starts with $ORIGIN').toBeDefined();
    const output = execFileSync('nsd-checkzone', [origin!, `${DIR}${file}`], { encoding: 'utf8' });
    expect(output).toContain(`zone ${origin} is ok`);
  });
});
