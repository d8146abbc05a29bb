/**
 * Issue 29, item 3: one transport check opens at most MAX_CONNECTIONS_PER_ADDRESS connections to one
 * IP address. Twelve MX names on the lab's STARTTLS server (127.0.0.2) used to give ten connections
 * to it; now the first two names are probed, the others share the first probe, each name still
 * judged against the certificate for itself (a name the certificate carries is `ok`, another is
 * `cert-name-mismatch`). Counted at the lab's own SMTP listener.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { checkTransport, MAX_CONNECTIONS_PER_ADDRESS, MAX_MX_HOSTS_PROBED } from '../../packages/engine/src/transport/index.js';
import { parseZone } from '../../packages/engine/src/zones/parse.js';
import { SMTP_TLS, SMTP_PLAIN, startLab, type Lab } from './lab.js';

let lab: Lab;
beforeAll(async () => {
  lab = await startLab();
});
afterAll(async () => {
  await lab?.close();
});

/** The names the lab's certificate carries (it is made for the lab domains), then names it does not. */
const IN_CERTIFICATE = ['mx.enforce-ok.example', 'mx1.enforce-ok.example', 'mx2.enforce-ok.example'];
const NOT_IN_CERTIFICATE = Array.from({ length: 9 }, (_, i) => `h${i + 1}.many.example`);

/** many.example: twelve MX names (in this order of preference), every one on `address`. */
function resolverFor(address: string, order: readonly string[]): ZoneResolver {
  const many = parseZone(`$ORIGIN many.example.
$TTL 300
@ IN SOA ns1 hostmaster 1 3600 600 86400 60
@ IN NS ns1
ns1 IN A 198.51.100.53
${order.map((host, i) => `@ IN MX ${10 + i} ${host}.`).join('\n')}
${NOT_IN_CERTIFICATE.map((host) => `${host}. IN A ${address}`).join('\n')}
`);
  const other = parseZone(`$ORIGIN enforce-ok.example.
$TTL 300
@ IN SOA ns1 hostmaster 1 3600 600 86400 60
@ IN NS ns1
ns1 IN A 198.51.100.53
${IN_CERTIFICATE.map((host) => `${host}. IN A ${address}`).join('\n')}
`);
  return new ZoneResolver([many, other]);
}

const run = (resolver: ZoneResolver) =>
  checkTransport('many.example', { resolver, connectPorts: { smtp: lab.smtpPort, https: lab.httpsPort }, tlsCa: lab.caPem, allowPrivateAddresses: true, ehloName: 'probe.lab.example' });

describe('connections per address', () => {
  it(`twelve MX names on one address: ${MAX_CONNECTIONS_PER_ADDRESS} connections, every probed name judged for itself`, async () => {
    expect(MAX_CONNECTIONS_PER_ADDRESS).toBe(2);
    
    // The first probed name is in the certificate; the shared ones are a mix.
    const order = [IN_CERTIFICATE[0]!, ...NOT_IN_CERTIFICATE.slice(0, 4), IN_CERTIFICATE[1]!, ...NOT_IN_CERTIFICATE.slice(4), IN_CERTIFICATE[2]!];
    const before = lab.seen.smtpTls;
    const result = await run(resolverFor(SMTP_TLS, order));
    expect(lab.seen.smtpTls - before).toBe(MAX_CONNECTIONS_PER_ADDRESS);
    const probed = result.mx.filter((mx) => mx.addresses.length > 0);
    expect(probed).toHaveLength(MAX_MX_HOSTS_PROBED);
    for (const mx of probed) {
      expect(mx.addresses, mx.host).toHaveLength(1);
      expect(mx.addresses[0]!.address).toBe(SMTP_TLS);
      expect(mx.addresses[0]!.outcome, mx.host).toBe(IN_CERTIFICATE.includes(mx.host) ? 'ok' : 'cert-name-mismatch');
      expect(mx.addresses[0]!.certificate?.san).toContain('mx.enforce-ok.example');
    }
  });

  it('a failure is shared too: twelve names on a server without STARTTLS, two connections, twelve times no-starttls', async () => {
    const before = lab.seen.smtpPlain;
    const result = await run(resolverFor(SMTP_PLAIN, [...IN_CERTIFICATE, ...NOT_IN_CERTIFICATE]));
    expect(lab.seen.smtpPlain - before).toBe(MAX_CONNECTIONS_PER_ADDRESS);
    const outcomes = result.mx.flatMap((mx) => mx.addresses.map((a) => a.outcome));
    expect(outcomes).toEqual(new Array(MAX_MX_HOSTS_PROBED).fill('no-starttls'));
  });
});
