/**
 * `spoof-checker dns-serve`, run in-process: it serves a zone directory until its stop signal, and
 * refuses bad arguments with exit 2.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dnsServe } from '../../src/cli/dns-serve.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, type CliIo } from '../../src/cli/io.js';
import { NetworkResolver } from '../../packages/engine/src/dns/network-resolver.js';
import { startDnsServer } from '../../packages/engine/src/zones/server.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { deferred, ZONES } from '../../packages/engine/test/dns/helpers.js';
import { createRawQuery } from '../../packages/engine/src/dnssec/query.js';
import { TYPE } from '../../packages/engine/src/dns/canonical.js';

const ZONE_FILE = `$ORIGIN serve.test.
$TTL 300
@     IN SOA ns1.serve.test. hostmaster.serve.test. ( 1 3600 600 86400 60 )
@     IN NS  ns1.serve.test.
ns1   IN A   192.0.2.53
@     IN TXT "v=spf1 " "-all"
_dmarc IN TXT "v=DMARC1; p=reject"
`;
const OTHER_ZONE_FILE = `$ORIGIN other.test.
$TTL 300
@     IN SOA ns1.other.test. hostmaster.other.test. 1 3600 600 86400 60
@     IN NS  ns1.other.test.
ns1   IN A   192.0.2.54
`;

/** An in-process CliIo whose stop signal the test fires, with everything written kept. */
function testIo() {
  const stop = deferred<string>();
  const output = { out: '', err: '' };
  const io: CliIo = {
    out: (text) => void (output.out += text),
    err: (text) => void (output.err += text),
    stdin: Readable.from([]),
    stderrIsTTY: false,
    env: {},
    stopSignal: stop.promise,
  };
  return { io, output, stop: (signal = 'SIGTERM') => stop.resolve(signal) };
}

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

let dir: string;
let brokenDir: string;
let emptyDir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dns-serve-'));
  await writeFile(join(dir, 'serve.zone'), ZONE_FILE);
  await writeFile(join(dir, 'other.zone'), OTHER_ZONE_FILE);
  brokenDir = await mkdtemp(join(tmpdir(), 'dns-serve-broken-'));
  await writeFile(join(brokenDir, 'broken.zone'), '$ORIGIN broken.test.\n@ IN SOA ns1 hostmaster ( 1 2 3\n');
  emptyDir = await mkdtemp(join(tmpdir(), 'dns-serve-empty-'));
});
afterAll(async () => {
  for (const path of [dir, brokenDir, emptyDir]) await rm(path, { recursive: true, force: true });
});

describe('dns-serve', () => {
  it('serves the zone directory until stopped, then exits 0', async () => {
    const { io, output, stop } = testIo();
    const exit = dnsServe([dir, '--port', '0', '--host', '127.0.0.1'], io);
    await waitFor(() => output.out.includes('listening'));
    const match = /listening on 127\.0\.0\.1:(\d+) \(udp\+tcp\), 2 zones/.exec(output.out);
    expect(match).not.toBeNull();
    const port = Number(match?.[1]);
    const resolver = new NetworkResolver({ servers: [`127.0.0.1:${port}`], timeoutMs: 1000 });
    expect(await resolver.resolve('serve.test', 'TXT')).toMatchObject({ kind: 'records', records: [['v=spf1 ', '-all']] });
    expect(await resolver.resolve('_dmarc.serve.test', 'TXT')).toMatchObject({ kind: 'records', records: [['v=DMARC1; p=reject']] });
    // TTLs as the zone file gives them; negative answers min(SOA TTL 300, MINIMUM 60) (RFC 2308 §5).
    expect(await resolver.resolve('serve.test', 'TXT')).toMatchObject({ ttl: 300 });
    expect(await resolver.resolve('nothing.serve.test', 'TXT')).toMatchObject({ kind: 'nxdomain', ttl: 60 });
    expect(await resolver.resolve('ns1.serve.test', 'TXT')).toMatchObject({ kind: 'nodata', ttl: 60 });
    // An authoritative server: names outside its zones are refused, not denied.
    expect(output.out).toContain('names outside them REFUSED');
    expect(await resolver.resolve('_dmarc.example', 'TXT')).toMatchObject({ kind: 'error', reason: 'refused' });
    stop('SIGINT');
    expect(await exit).toBe(EXIT_OK);
    expect(output.out).toContain('stopped (SIGINT)');
    expect(output.err).toBe('');
    // The port is free again: nothing answers there any more.
    const after = new NetworkResolver({ servers: [`127.0.0.1:${port}`], timeoutMs: 300, attempts: 1 });
    expect((await after.resolve('serve.test', 'TXT')).kind).toBe('error');
  });

  it('answers NXDOMAIN outside its zones with --outside nxdomain, for `check --resolver` against it', async () => {
    const { io, output, stop } = testIo();
    const exit = dnsServe([dir, '--port', '0', '--outside', 'nxdomain'], io);
    await waitFor(() => output.out.includes('listening'));
    expect(output.out).toContain('names outside them NXDOMAIN');
    const port = Number(/:(\d+) \(udp\+tcp\)/.exec(output.out)?.[1]);
    const resolver = new NetworkResolver({ servers: [`127.0.0.1:${port}`], timeoutMs: 1000 });
    expect(await resolver.resolve('_dmarc.example', 'TXT')).toMatchObject({ kind: 'nxdomain' });
    expect(await resolver.resolve('serve.test', 'TXT')).toMatchObject({ kind: 'records' });
    stop();
    expect(await exit).toBe(EXIT_OK);
  });

  it('serves the signed DNSSEC fixtures (a TLSA record included) with their signatures (issue 42)', async () => {
    const { io, output, stop } = testIo();
    const exit = dnsServe(['fixtures/dnssec/zones', '--port', '0', '--host', '127.0.0.1'], io);
    await waitFor(() => output.out.includes('listening') || output.err !== '');
    expect(output.err).toBe('');
    const match = /listening on 127\.0\.0\.1:(\d+) \(udp\+tcp\), (\d+) zones/.exec(output.out);
    expect(Number(match?.[2])).toBe(26);
    const query = createRawQuery([{ host: '127.0.0.1', port: Number(match?.[1]) }], { timeoutMs: 1000 });
    // The unsigned zone's TLSA (the record that stopped the load) and a signed zone's TLSA with its RRSIG.
    for (const [name, signed] of [['_25._tcp.mx1.unsigned.test', false], ['_25._tcp.mx1.secure-nsec.test', true]] as const) {
      const response = await query(name, TYPE.TLSA);
      expect(response.kind).toBe('response');
      const answer = response.kind === 'response' ? response.message.answer : [];
      expect(answer.filter((r) => r.type === TYPE.TLSA)).toHaveLength(1);
      expect(answer.some((r) => r.type === TYPE.RRSIG)).toBe(signed);
    }
    const keys = await query('', TYPE.DNSKEY);
    expect(keys.kind === 'response' && keys.message.answer.some((r) => r.type === TYPE.DNSKEY)).toBe(true);
    stop();
    expect(await exit).toBe(EXIT_OK);
  });

  it('prints its usage on --help and exits 0', async () => {
    const { io, output } = testIo();
    expect(await dnsServe(['--help'], io)).toBe(EXIT_OK);
    expect(output.out).toMatch(/^Usage: spoof-checker dns-serve <zones-dir>/);
  });

  it.each([
    [[], /zones directory is missing/, 'no directory'],
    [['a', 'b'], /one zones directory expected/, 'two directories'],
    [['DIR', '--port', 'abc'], /--port must be a whole number from 0 to 65535/, 'port not a number'],
    [['DIR', '--port', '70000'], /--port must be a whole number/, 'port too high'],
    [['DIR', '--host', 'localhost'], /--host must be an IP address/, 'host not an address'],
    [['DIR', '--verbose'], /verbose/, 'unknown option'],
    [['DIR', '--outside', 'servfail'], /--outside must be refused or nxdomain, not "servfail"/, 'an --outside that is not known'],
    [['/nonexistent/zones'], /the zones directory \/nonexistent\/zones: no such directory .*use --demo-zones instead/, 'a directory that does not exist (names --demo-zones)'],
    [['EMPTY'], /holds no \*\.zone files/, 'a directory without zone files'],
  ])('exits 2 with a message for %j (%s)', async (args, message) => {
    const { io, output } = testIo();
    const resolved = args.map((arg) => (arg === 'DIR' ? dir : arg === 'EMPTY' ? emptyDir : arg));
    expect(await dnsServe(resolved, io)).toBe(EXIT_USAGE);
    expect(output.err).toMatch(message);
    expect(output.out).toBe('');
  });

  it('exits 1 when a zone file does not parse, naming the file', async () => {
    const { io, output } = testIo();
    expect(await dnsServe([brokenDir, '--port', '0'], io)).toBe(EXIT_FAILED);
    expect(output.err).toMatch(/broken\.zone:\d+:\d+/);
  });

  it('exits 1 when the port is taken', async () => {
    const other = await startDnsServer({ resolver: new ZoneResolver(ZONES) });
    try {
      const { io, output } = testIo();
      expect(await dnsServe([dir, '--port', String(other.address.port)], io)).toBe(EXIT_FAILED);
      expect(output.err).toMatch(/cannot listen on 127\.0\.0\.1:\d+: .*EADDRINUSE/);
    } finally {
      await other.close();
    }
  });
});
