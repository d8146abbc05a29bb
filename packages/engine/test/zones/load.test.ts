import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZoneResolver } from '../../src/zones/zone-resolver.js';
import type { DnsAnswer, RecordType } from '../../src/dns/types.js';
import { loadZoneDirectory, loadZoneFile, ZoneLoadError } from '../../src/zones/load.js';
import { ZoneSyntaxError } from '../../src/zones/parse.js';
import type { Zone } from '../../src/zones/types.js';

const DATA = fileURLToPath(new URL('./data', import.meta.url));
const SET = join(DATA, 'set');

describe('loadZoneDirectory: a multi-file zone set answered through ZoneResolver', () => {
  let zones: Zone[];
  let resolver: ZoneResolver;

  beforeAll(async () => {
    zones = await loadZoneDirectory(SET);
    resolver = new ZoneResolver(zones);
  });

  it('loads the *.zone files directly in the directory, in name order, with their origins', () => {
    // notes.txt, include/*.inc and ignored/nested.zone are not zones of the set.
    expect(zones.map((zone) => [zone.origin, zone.source])).toEqual([
      ['example.com', join(SET, 'example.com.zone')],
      ['example.net', join(SET, 'example.net.zone')],
    ]);
  });

  const SOA_COM = { mname: 'ns1.example.com', rname: 'hostmaster.example.com', serial: 2024060101, refresh: 7200, retry: 900, expire: 1209600, minimum: 300 };

  it.each<[string, RecordType, DnsAnswer, string]>([
    ['example.com', 'SOA', { kind: 'records', records: [SOA_COM], ttl: 3600 }, 'multi-line SOA with units and comments'],
    ['example.com', 'NS', { kind: 'records', records: ['ns1.example.com', 'ns2.example.net'], ttl: 3600 }, 'blank owners after the SOA'],
    ['example.com', 'MX', { kind: 'records', records: [{ preference: 10, exchange: 'mail.example.com' }, { preference: 20, exchange: 'mail.example.net' }], ttl: 3600 }, 'relative and absolute exchanges'],
    ['example.com', 'TXT', { kind: 'records', records: [['v=spf1 ip4:192.0.2.0/24 ', 'include:_spf.example.net ', '-all']], ttl: 3600 }, 'three character-strings kept apart'],
    ['mail.example.com', 'AAAA', { kind: 'records', records: ['2001:db8::25'], ttl: 3600 }, 'blank owner without a TTL takes $TTL, not the TTL of the line above'],
    ['mail.example.com', 'A', { kind: 'records', records: ['192.0.2.25'], ttl: 300 }, 'an explicit TTL'],
  ])('%s %s: %s', async (name, type, expected) => {
    expect(await resolver.resolve(name, type)).toEqual(expected);
  });

  it.each<[string, RecordType, DnsAnswer, string]>([
    ['s1._domainkey.example.com', 'TXT', { kind: 'records', records: [['v=DKIM1; k=rsa; ', 'p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA']], ttl: 3600 }, 'from an included file with an origin argument, over two lines'],
    ['_domainkey.example.com', 'TXT', { kind: 'records', records: [['o=~']], ttl: 3600 }, '"@" in the included file is its origin'],
    ['x.wild.example.com', 'TXT', { kind: 'records', records: [['wildcard']], ttl: 3600 }, 'a wildcard from an included file without an origin argument'],
    ['_dmarc.example.com', 'TXT', { kind: 'records', records: [['v=DMARC1; p=reject; rua=mailto:dmarc@example.com']], ttl: 3600 }, 'a semicolon inside quotes'],
    ['www.example.com', 'MX', { kind: 'records', records: [{ preference: 10, exchange: 'mail.example.com' }, { preference: 20, exchange: 'mail.example.net' }], ttl: 3600, cnames: ['example.com'] }, 'CNAME to "@"'],
    ['shop.example.com', 'A', { kind: 'records', records: ['198.51.100.80'], ttl: 3600, cnames: ['shop.example.net', 'www.example.net'] }, 'a CNAME chain across the two files'],
    ['_spf.example.net', 'TXT', { kind: 'records', records: [['v=spf1 ip4:198.51.100.0/24 -all']], ttl: 3600 }, 'the second zone'],
    ['ns1.example.com', 'TXT', { kind: 'nodata', ttl: 300 }, 'NODATA: the name exists, the type does not (negative TTL from the SOA, RFC 2308 §5)'],
    ['nothere.example.com', 'A', { kind: 'nxdomain', ttl: 300 }, 'NXDOMAIN inside a loaded zone'],
    ['mail.example.net', 'MX', { kind: 'nodata', ttl: 60 }, 'NODATA in the second zone, with its own SOA minimum'],
    ['ns.example.org', 'A', { kind: 'nxdomain' }, 'the zone in a subdirectory was not loaded'],
  ])('%s %s: %s', async (name, type, expected) => {
    expect(await resolver.resolve(name, type)).toEqual(expected);
  });
});

describe('loadZoneFile', () => {
  it('loads one file, with $INCLUDE relative to that file', async () => {
    const zone = await loadZoneFile(join(SET, 'example.com.zone'));
    expect(zone.origin).toBe('example.com');
    expect(zone.records.filter((record) => record.name.endsWith('_domainkey.example.com')).map((record) => record.name)).toEqual([
      's1._domainkey.example.com',
      '_domainkey.example.com',
    ]);
  });

  it('names the file, line and column of a syntax error', async () => {
    const path = join(DATA, 'bad', 'broken.zone');
    await expect(loadZoneFile(path)).rejects.toThrow(new ZoneSyntaxError(path, 5, 10, 'expected an IPv4 address (like 192.0.2.1), found "192.0.2.300"'));
  });

  it('refuses a zone without NS records at its apex, unless asked not to', async () => {
    const path = join(DATA, 'bad', 'no-ns.zone');
    await expect(loadZoneFile(path)).rejects.toThrow(
      `${path}:5:1: expected an NS record at the apex "no-ns.test" (RFC 1034 §4.2.1), found the end of the file without one`,
    );
    const zone = await loadZoneFile(path, { requireSoaAndNs: false });
    expect(zone.records.map((record) => record.type)).toEqual(['SOA', 'A']);
  });

  it('refuses an $INCLUDE loop across files on disk', async () => {
    const loop = join(DATA, 'loop');
    await expect(loadZoneFile(join(loop, 'a.zone'))).rejects.toThrow(
      `${join(loop, 'b.inc')}:2:10: expected $INCLUDE to name a file not already being read, found a loop: "${join(loop, 'a.zone')}" includes itself through this line`,
    );
  });

  it('names a missing file', async () => {
    const path = join(DATA, 'no-such.zone');
    const error = await loadZoneFile(path).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ZoneLoadError);
    expect(error).toMatchObject({ path, message: expect.stringContaining(`cannot read the zone file "${path}": ENOENT`) });
  });

  it('takes the origin from the caller when given, as a server configuration does', async () => {
    const zone = await loadZoneFile(join(DATA, 'no-origin', 'relative.zone'), { origin: 'Relative.Test.' });
    expect(zone.origin).toBe('relative.test');
    expect(zone.records.map((record) => `${record.name} ${record.type}`)).toEqual(['relative.test SOA', 'relative.test NS', 'ns.relative.test A']);
  });

  it('refuses a file without $ORIGIN when the caller gives no origin', async () => {
    const path = join(DATA, 'no-origin', 'relative.zone');
    await expect(loadZoneFile(path)).rejects.toThrow(`${path}:3:1: expected an origin for "@": add "$ORIGIN <name>." above this line, found none`);
  });

  it('keeps the caller\'s origin as the apex: a file for another zone is refused', async () => {
    const path = join(SET, 'example.net.zone');
    await expect(loadZoneFile(path, { origin: 'net' })).rejects.toThrow(
      `${path}:3:1: expected the SOA record at the zone origin "net", found it at "example.net"`,
    );
  });
});

describe('loadZoneDirectory: refusals', () => {
  let empty: string;

  beforeAll(async () => {
    empty = await mkdtemp(join(tmpdir(), 'zones-empty-'));
  });
  afterAll(async () => {
    await rm(empty, { recursive: true, force: true });
  });

  it('refuses a missing directory', async () => {
    const dir = join(DATA, 'no-such-dir');
    const error = await loadZoneDirectory(dir).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ZoneLoadError);
    expect(error).toMatchObject({ path: dir, message: expect.stringContaining(`cannot read the zone directory "${dir}": ENOENT`) });
  });

  it('refuses an empty directory', async () => {
    await expect(loadZoneDirectory(empty)).rejects.toThrow(new ZoneLoadError(empty, `the zone directory "${empty}" holds no *.zone files`));
  });

  it('refuses a directory whose files are not zones', async () => {
    const dir = join(DATA, 'other-files');
    await expect(loadZoneDirectory(dir)).rejects.toThrow(`the zone directory "${dir}" holds no *.zone files`);
  });

  it('refuses two files for one zone', async () => {
    const dir = join(DATA, 'duplicate');
    await expect(loadZoneDirectory(dir)).rejects.toThrow(
      `"${join(dir, 'one.zone')}" and "${join(dir, 'two.zone')}" both hold the zone "dup.test": give each zone one file`,
    );
  });

  it('fails as a whole when one file is wrong, naming that file', async () => {
    const dir = join(DATA, 'bad');
    await expect(loadZoneDirectory(dir)).rejects.toThrow(`${join(dir, 'broken.zone')}:5:10: expected an IPv4 address`);
  });
});
