import { createSocket } from 'node:dgram';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { startDnsServer } from '../../packages/engine/src/zones/server.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { loadZoneDirectory } from '../../packages/engine/src/zones/load.js';
import { guideLocation } from '../../src/cli/report.js';
import { captureIo, FIXTURE_ZONES, ZONES } from './helpers.js';

describe('spoof-checker check', () => {
  it('prints one JSON line per input, in input order, and exits 1 when any input failed', async () => {
    const { io, stdout } = captureIo();
    const code = await main(['check', 'open.example', '192.0.2.1', 'https://demo.example/x', '--zones', ZONES, '--json'], io);
    expect(code).toBe(1);
    const lines = stdout().trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({ domain: 'open.example', verdict: 'spoofable', spoofable: true, inboxOutcome: 'delivered' });
    expect(lines[0].reasons[0]).toMatchObject({ id: 'spf-plus-all', severity: 'critical' });
    expect(lines[1]).toEqual({ input: '192.0.2.1', error: { code: 'invalid_domain', message: expect.stringMatching(/IP address/) } });
    expect(lines[2]).toMatchObject({ domain: 'demo.example', verdict: 'protected' });
  });

  it('exits 0 when every input was checked', async () => {
    const { io } = captureIo();
    expect(await main(['check', 'demo.example', '--zones', ZONES, '--json'], io)).toBe(0);
  });

  it('prints a readable report with the reasons, the SPF tree and the next step', async () => {
    const { io, stdout } = captureIo();
    expect(await main(['check', 'demo.example', '--zones', ZONES], io)).toBe(0);
    const text = stdout();
    expect(text).toContain('demo.example: protected (forged mail is rejected)');
    expect(text).toContain('No — receivers are told to reject fakes as you@demo.example');
    expect(text).toMatch(/SPF lookup tree \(1 lookup\):\n.*\n\s+├─ include:_spf\.demo\.example\s+\(1 lookup\)/);
    expect(text).toContain("Next step: Close the subdomain gap ('sp=reject')");
  });

  it('says the subdomain note once, and the summary in other words than the first reason', async () => {
    const { io, stdout } = captureIo();
    expect(await main(['check', 'reject-sp-none.example', '--zones', FIXTURE_ZONES], io)).toBe(0);
    const text = stdout();
    // The note is the subdomain reason's detail: printed there, not again under "Subdomains:".
    expect(text).toContain('(subdomain-hole)');
    expect(text).not.toContain('  Subdomains:');
    const { io: jsonIo, stdout: json } = captureIo();
    await main(['check', 'reject-sp-none.example', '--zones', FIXTURE_ZONES, '--json'], jsonIo);
    const result = JSON.parse(json()) as { summary: string; reasons: { detail: string }[] };
    expect(result.summary).not.toBe(result.reasons[0]!.detail);
    expect(text).toContain(result.summary.split(' ').slice(0, 6).join(' '));
  });

  it('gives the most important fix as the next step when the verdict is good (SPF over the lookup limit)', async () => {
    const { io, stdout } = captureIo();
    expect(await main(['check', 'spf-too-many-lookups.example', '--zones', FIXTURE_ZONES], io)).toBe(0);
    const text = stdout();
    expect(text).toContain('spf-too-many-lookups.example: protected');
    expect(text).toContain('Next step: Bring your SPF record down to 10 DNS lookups');
    expect(text).not.toContain('Your domain is protected');
  });

  it('points the next step at the guide shipped in the package, and wraps prose but not records', async () => {
    const { io, stdout } = captureIo();
    expect(await main(['check', 'open.example', '--zones', ZONES], io)).toBe(0);
    const more = /^ {4}More: (.+)$/m.exec(stdout())?.[1];
    expect(more).toMatch(/\/docs\/guides\/[a-z-]+\.md$/);
    expect(existsSync(more!)).toBe(true);
    for (const line of stdout().split('\n')) {
      if (!/^\s+v=/.test(line)) expect(line.length, line).toBeLessThanOrEqual(100);
    }
  });

  it('names an IDN as written, with its A-label form, and reports a refusal on its own lines', async () => {
    const { io, stdout } = captureIo();
    expect(await main(['check', 'bücher.example', 'bad..name', '--zones', FIXTURE_ZONES], io)).toBe(1);
    expect(stdout()).toMatch(/^bücher\.example \(xn--bcher-kva\.example\): protected \(forged mail is rejected\)\n/);
    expect(stdout()).toMatch(/\nbad\.\.name: cannot check \(invalid_domain\)\n {2}"bad\.\.name" cannot be a domain name: .*\n/);
  });

  it.each([
    ['/guides/spf-open?domain=a.example', /\/docs\/guides\/spf-open\.md$/],
    ['/guides/unknown-topic', /^\/guides\/unknown-topic$/],
    ['https://example.com/guides/spf-open', /^https:\/\/example\.com\/guides\/spf-open$/],
  ])('guideLocation(%j)', (href, expected) => {
    expect(guideLocation(href)).toMatch(expected);
  });

  it.each([
    [['check'], /at least one domain/],
    [['check', 'a.example', '--zones', ZONES, '--resolver', '127.0.0.1'], /not both/],
    [['check', 'a.example', '--bogus'], /^spoof-checker check: unknown option '--bogus'\.\nRun 'spoof-checker check --help' for the options\.\n$/],
    [['check', 'a.example', '--zones', '/no/such/dir'], /no\/such\/dir/],
    [['check', 'a.example', '--resolver', 'not-an-ip'], /not an IP address/],
    [['check', 'a.example', '--resolver', '127.0.0.1,,127.0.0.2'], /--resolver takes DNS servers separated by commas.*has an empty entry/],
    [['check', 'a.example', '--resolver', '127.0.0.1, nope'], /not an IP address/],
    [['nope'], /^spoof-checker: unknown command 'nope'\.\nRun 'spoof-checker --help' for the list of commands\.\n$/],
  ])('refuses %j with exit 2 and says why', async (args, message) => {
    const { io, stderr } = captureIo();
    expect(await main(args, io)).toBe(2);
    expect(stderr()).toMatch(message);
  });

  it('with several servers, a query one does not answer is asked of the next: a silent first server still gives the verdict', async () => {
    const zones = new ZoneResolver(await loadZoneDirectory(ZONES));
    const live = await startDnsServer({ resolver: zones, outsideZones: 'nxdomain' });
    // A UDP socket that reads every query and answers none.
    const silent = createSocket('udp4');
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
    try {
      const { io, stdout } = captureIo();
      const servers = `127.0.0.1:${silent.address().port}, ${live.address.host}:${live.address.port}`;
      const code = await main(['check', 'demo.example', '--resolver', servers, '--timeout', '300', '--json'], io);
      expect(code).toBe(0);
      expect(JSON.parse(stdout())).toMatchObject({ domain: 'demo.example', verdict: 'protected' });
    } finally {
      silent.close();
      await live.close();
    }
  });

  it('reports an unreachable DNS server per input as a DNS failure, not as a verdict', async () => {
    const { io, stdout } = captureIo();
    // Port 9 on loopback: nothing listens, so queries are refused or time out.
    const code = await main(['check', 'demo.example', '--resolver', '127.0.0.1:9', '--timeout', '300', '--json'], io);
    expect(code).toBe(1);
    const line = JSON.parse(stdout());
    expect(line.input).toBe('demo.example');
    expect(line.error.code).toMatch(/^dns_(failure|timeout)$/);
    expect(line.error.message).toMatch(/_dmarc\.demo\.example|demo\.example/);
  });
});

describe('check when the DNS server cannot be reached', () => {
  /** A loopback UDP port nothing listens on: bound to learn a free one, then closed. */
  async function closedPort(): Promise<number> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const { port } = socket.address();
    await new Promise<void>((resolve) => socket.close(() => resolve()));
    return port;
  }

  it('says the server cannot be reached (not a SERVFAIL of the domain) and how to fix it with --resolver', async () => {
    const port = await closedPort();
    const { io, stdout } = captureIo();
    expect(await main(['check', 'demo.example', '--resolver', `127.0.0.1:${port}`, '--timeout', '2000'], io)).toBe(1);
    const text = stdout().replace(/\s+/g, ' ');
    expect(text).toContain('demo.example: cannot check (dns_failure)');
    expect(text).toContain(`got no answer: the DNS server 127.0.0.1:${port} cannot be reached: no DNS server listens there (connection refused).`);
    expect(text).toContain(`Check the address and port given with --resolver 127.0.0.1:${port}, or give a DNS server that answers with --resolver IP (for example --resolver 1.1.1.1).`);
    expect(text).not.toMatch(/SERVFAIL|they answered with an error/);
  });

  it('the --json line carries the same words', async () => {
    const port = await closedPort();
    const { io, stdout } = captureIo();
    expect(await main(['check', 'demo.example', '--resolver', `127.0.0.1:${port}`, '--timeout', '2000', '--json'], io)).toBe(1);
    const line = JSON.parse(stdout()) as { error: { code: string; message: string } };
    expect(line.error.code).toBe('dns_failure');
    expect(line.error.message).toMatch(/cannot be reached.*--resolver IP/);
  });
});
