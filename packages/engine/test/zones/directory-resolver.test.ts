// ZoneDirectoryResolver (packages/engine/src/zones/directory-resolver.ts): zones read on first use
// answer exactly as ZoneResolver over the same files, with a bounded number in memory.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZoneDirectoryResolver } from '../../src/zones/directory-resolver.js';
import { loadZoneDirectory } from '../../src/zones/load.js';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import type { RecordType } from '../../src/dns/types.js';

const FIXTURE_ZONES = join(import.meta.dirname, '..', '..', '..', '..', 'fixtures', 'zones');
const TYPES: RecordType[] = ['A', 'AAAA', 'TXT', 'MX', 'CNAME', 'NS', 'SOA'];

function zoneText(origin: string, body: string): string {
  return `$TTL 300\n$ORIGIN ${origin}.\n@ IN SOA ns1.${origin}. host.${origin}. 1 3600 600 86400 300\n@ IN NS ns1.${origin}.\nns1 IN A 192.0.2.1\n${body}\n`;
}

describe('ZoneDirectoryResolver', () => {
  let scratch: string;
  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'zone-directory-'));
  });
  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('answers every name and type of the fixture zones as ZoneResolver does, even with one zone in memory', async () => {
    const zones = await loadZoneDirectory(FIXTURE_ZONES);
    const whole = new ZoneResolver(zones);
    const onDemand = await ZoneDirectoryResolver.open(FIXTURE_ZONES, { maxCachedZones: 1 });
    expect(onDemand.zoneCount).toBe(zones.length);
    const names = new Set<string>();
    for (const zone of zones) {
      for (const record of zone.records) {
        names.add(record.name);
        names.add(`no-such-label.${record.name}`);
      }
    }
    names.add('outside-every-zone.invalid');
    let compared = 0;
    for (const name of names) {
      for (const type of TYPES) {
        expect(await onDemand.resolve(name, type), `${name} ${type}`).toEqual(await whole.resolve(name, type));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });

  it('keeps at most maxCachedZones zones parsed, and parses a zone once while it stays cached', async () => {
    const dir = join(scratch, 'many');
    await rm(dir, { recursive: true, force: true });
    await (await import('node:fs/promises')).mkdir(dir);
    for (let index = 0; index < 20; index++) await writeFile(join(dir, `d${index}.example.zone`), zoneText(`d${index}.example`, '@ IN TXT "v=spf1 -all"'));
    const resolver = await ZoneDirectoryResolver.open(dir, { maxCachedZones: 5 });
    for (let index = 0; index < 5; index++) await resolver.resolve(`d${index}.example`, 'TXT');
    for (let index = 0; index < 5; index++) await resolver.resolve(`d${index}.example`, 'SOA');
    expect(resolver.stats.loads).toBe(5);
    for (let index = 5; index < 20; index++) await resolver.resolve(`d${index}.example`, 'TXT');
    expect(resolver.stats.loads).toBe(20);
    // d0 was dropped long ago: asked again, it is read again.
    expect(await resolver.resolve('d0.example', 'TXT')).toMatchObject({ kind: 'records', records: [['v=spf1 -all']] });
    expect(resolver.stats.loads).toBe(21);
  });

  it('follows a CNAME chain across more zones than it keeps, and reads a file not named after its zone', async () => {
    const dir = join(scratch, 'chain');
    await (await import('node:fs/promises')).mkdir(dir, { recursive: true });
    for (let index = 0; index < 6; index++) {
      const body = index < 5 ? `www IN CNAME www.c${index + 1}.example.` : 'www IN A 192.0.2.55';
      // One file is named after nothing in particular: the index reads its $ORIGIN.
      await writeFile(join(dir, index === 3 ? 'zz-odd-name.zone' : `c${index}.example.zone`), zoneText(`c${index}.example`, body));
    }
    const resolver = await ZoneDirectoryResolver.open(dir, { maxCachedZones: 1 });
    const answer = await resolver.resolve('www.c0.example', 'A');
    expect(answer).toEqual(await new ZoneResolver(await loadZoneDirectory(dir)).resolve('www.c0.example', 'A'));
    expect(answer).toMatchObject({ kind: 'records', cnames: ['www.c1.example', 'www.c2.example', 'www.c3.example', 'www.c4.example', 'www.c5.example'] });
  });

  it('fails the lookups into a broken file with its line, never answers NXDOMAIN for it', async () => {
    const dir = join(scratch, 'broken');
    await (await import('node:fs/promises')).mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'good.example.zone'), zoneText('good.example', ''));
    await writeFile(join(dir, 'bad.example.zone'), zoneText('bad.example', '@ IN MX not-a-number mail.bad.example.'));
    const resolver = await ZoneDirectoryResolver.open(dir);
    const answer = await resolver.resolve('bad.example', 'MX');
    expect(answer.kind).toBe('error');
    expect(answer).toMatchObject({ reason: 'servfail' });
    expect((answer as { detail: string }).detail).toMatch(/bad\.example\.zone/);
    expect(await resolver.resolve('good.example', 'SOA')).toMatchObject({ kind: 'records' });
  });

  it('refuses two files with one origin, and an empty directory, as loadZoneDirectory does', async () => {
    const dir = join(scratch, 'twice');
    await (await import('node:fs/promises')).mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'a.zone'), zoneText('same.example', ''));
    await writeFile(join(dir, 'b.zone'), zoneText('same.example', ''));
    await expect(ZoneDirectoryResolver.open(dir)).rejects.toThrow(/both hold the zone "same\.example"/);
    const empty = join(scratch, 'empty');
    await (await import('node:fs/promises')).mkdir(empty, { recursive: true });
    await expect(ZoneDirectoryResolver.open(empty)).rejects.toThrow(/holds no \*\.zone files/);
  });
});
