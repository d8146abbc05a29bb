/**
 * Transport verdicts that must not contradict their findings: a null MX is `no-mail` with its one
 * finding and nothing to publish; an MX no address of which could be probed is `untested`, never
 * `opportunistic`; no MX line is ever invented for a policy to publish; a refused address is named in
 * the MX list with the address guard's own words, as in its finding. Zones in memory, no connection.
 */
import { describe, expect, it } from 'vitest';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { checkTransport } from '../../packages/engine/src/transport/index.js';
import { judgeTransport, type MxFacts } from '../../packages/engine/src/transport/judge.js';
import { parseZone } from '../../packages/engine/src/zones/parse.js';
import { formatTransport } from '../../src/cli/report.js';
import { toHtmlString } from '../../src/web/html.js';
import { transportSection } from '../../src/web/transport-view.js';

const zone = (origin: string, body: string) => parseZone(`$ORIGIN ${origin}.\n$TTL 300\n@ SOA ns1.dns.example. hostmaster.dns.example. 1 7200 3600 1209600 300\n${body}\n`);
const resolver = new ZoneResolver([
  zone('null-mx.example', '@ MX 0 .\n_mta-sts TXT "v=STSv1; id=1"\n_smtp._tls TXT "v=TLSRPTv1; rua=mailto:tls@null-mx.example"'),
  zone('null-mx-bare.example', '@ MX 0 .'),
  zone('doc-mx.example', '@ MX 10 mx\nmx A 192.0.2.25\nmx AAAA 2001:db8::25'),
  zone('private-mx.example', '@ MX 10 mx\nmx A 10.1.2.3'),
  zone('no-mx.example', 'www A 192.0.2.80'),
]);
const check = (domain: string) => checkTransport(domain, { resolver, timeoutMs: 1000 });

describe('a null MX (RFC 7505): no-mail', () => {
  it.each(['null-mx.example', 'null-mx-bare.example'])('%s: verdict no-mail, its one finding, nothing to publish', async (domain) => {
    const result = await check(domain);
    expect(result.verdict).toBe('no-mail');
    expect(result.findings.map((f) => f.id)).toEqual(['transport-null-mx']);
    expect(result.findings[0]!.detail).toMatch(/null MX \(RFC 7505\): it accepts no mail/);
    expect(result.mx).toEqual([]);
    const text = JSON.stringify(result.findings);
    expect(text).not.toMatch(/mx: mail\./);
    expect(text).not.toMatch(/TLSRPTv1|_smtp\._tls|mta-sts\.txt/);
    // The CLI and the page say the same.
    expect(formatTransport(result).join('\n')).toContain('Mail sent to you: no-mail');
    expect(toHtmlString(transportSection(result, domain))).toContain('Accepts no mail');
  });
});

describe('nothing probed: untested', () => {
  it('an MX on documentation addresses: untested; the MX list and the finding say "reserved for documentation", never "private"', async () => {
    const result = await check('doc-mx.example');
    expect(result.mx[0]!.addresses.map((a) => a.outcome)).toEqual(['refused-private', 'refused-private']);
    // One classification, from the address guard, in the JSON too.
    expect(result.mx[0]!.addresses.map((a) => a.addressClass)).toEqual(['documentation', 'documentation']);
    expect(result.verdict).toBe('untested');
    expect(result.findings.map((f) => f.id)).toEqual(expect.arrayContaining(['mx-refused-private', 'transport-untested']));
    const refused = result.findings.filter((f) => f.id === 'mx-refused-private');
    for (const finding of refused) expect(finding.detail).toContain('an address reserved for documentation');
    const report = formatTransport(result).join('\n');
    expect(report).toContain('Mail sent to you: untested');
    expect(report).toContain('192.0.2.25: not probed, an address reserved for documentation');
    // The MX list never says "private" of it (the finding's id, mx-refused-private, is a code, not a word shown as its class).
    expect(report.split('\n').filter((line) => line.includes('192.0.2.25') || line.includes('2001:db8::25')).join('\n')).not.toMatch(/private/);
    const page = toHtmlString(transportSection(result, 'doc-mx.example'));
    expect(page).toContain('an address reserved for documentation, not probed');
    expect(page).not.toMatch(/private address/);
    expect(page).toContain('Untested');
  });

  it('an MX on a private address: untested, named a private network address in both places', async () => {
    const result = await check('private-mx.example');
    expect(result.verdict).toBe('untested');
    expect(result.findings.find((f) => f.id === 'mx-refused-private')!.detail).toContain('a private network address');
    expect(formatTransport(result).join('\n')).toContain('10.1.2.3: not probed, a private network address');
  });

  it('no MX and no host: untested, and the policy it suggests invents no MX host', async () => {
    const result = await check('gone.no-mx.example');
    expect(result.verdict).toBe('untested');
    expect(result.findings.map((f) => f.id)).toEqual(expect.arrayContaining(['transport-no-mx', 'transport-untested']));
    const absent = result.findings.find((f) => f.id === 'mta-sts-absent')!;
    expect(absent.detail).not.toMatch(/mx: mail\./);
    expect(absent.detail).toContain('mx: <each MX host of gone.no-mx.example>');
  });

  it('no MX but the name exists: its implicit MX (RFC 5321 §5.1) is the name itself, never an invented mail.<domain>', async () => {
    const result = await check('no-mx.example');
    expect(result.verdict).toBe('untested');
    expect(result.mx.map((m) => m.host)).toEqual(['no-mx.example']);
    const absent = result.findings.find((f) => f.id === 'mta-sts-absent')!;
    expect(absent.detail).toContain('  mx: no-mx.example');
    expect(absent.detail).not.toMatch(/mx: mail\./);
  });

  it('an enforce policy whose every MX address is unreachable: untested (not enforced, not opportunistic)', () => {
    const mx: MxFacts[] = [{ host: 'mx.example.net', preference: 10, covered: true, probes: [{ address: '198.51.100.25', outcome: 'unreachable', tlsVersion: null, certificate: null, detail: 'connection refused' }], unprobed: null }];
    const judged = judgeTransport({
      domain: 'example.net',
      mtaSts: { status: 'enforce', record: 'v=STSv1; id=1', id: '1', policy: { mode: 'enforce', maxAge: 604800, mx: ['mx.example.net'] }, fetch: { url: 'https://mta-sts.example.net/.well-known/mta-sts.txt', httpStatus: 200, error: null }, problems: [] },
      policy: { mode: 'enforce', maxAge: 604800, mx: ['mx.example.net'] },
      tlsRpt: { status: 'valid', record: 'v=TLSRPTv1; rua=mailto:tls@example.net', rua: ['mailto:tls@example.net'] },
      tlsRptProblem: null,
      mx,
      mxProblem: null,
      notes: [],
      now: new Date('2026-01-01T00:00:00Z'),
    });
    expect(judged.verdict).toBe('untested');
    expect(judged.findings.map((f) => f.id)).toEqual(expect.arrayContaining(['mx-unreachable', 'transport-untested']));
    expect(judged.findings.map((f) => f.id)).not.toContain('mta-sts-enforced');
  });
});
