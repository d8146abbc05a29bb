import { describe, expect, it } from 'vitest';
import { matchesHostPattern, MX_PROVIDERS, providerForMxHost } from '../../src/mx/providers.js';

describe('providerForMxHost', () => {
  it.each<[string, string | null, string]>([
    ['smtp.google.com', 'Google Workspace', 'single MX since 2023'],
    ['aspmx.l.google.com', 'Google Workspace', 'legacy primary'],
    ['alt4.aspmx.l.google.com', 'Google Workspace', 'legacy backup'],
    ['aspmx3.googlemail.com', 'Google Workspace', 'older extras'],
    ['gmail-smtp-in.l.google.com', 'Gmail', 'the more specific row wins'],
    ['alt1.gmail-smtp-in.l.google.com', 'Gmail', 'below the specific row'],
    ['contoso-com.mail.protection.outlook.com', 'Microsoft 365', 'classic M365'],
    ['contoso-com.o-v1.mx.microsoft', 'Microsoft 365', 'DNSSEC/DANE M365'],
    ['outlook-com.olc.protection.outlook.com', 'Outlook.com', 'consumer Outlook'],
    ['mx.zoho.com', 'Zoho Mail', 'US data centre'],
    ['mx2.zoho.eu', 'Zoho Mail', 'EU data centre'],
    ['mx3.zoho.com.au', 'Zoho Mail', 'AU data centre'],
    ['mail.protonmail.ch', 'Proton Mail', 'primary'],
    ['mailsec.protonmail.ch', 'Proton Mail', 'secondary'],
    ['in1-smtp.messagingengine.com', 'Fastmail', 'primary'],
    ['mx01.mail.icloud.com', 'iCloud Mail', 'primary'],
    ['mta5.am0.yahoodns.net', 'Yahoo Mail', 'consumer'],
    ['mx-biz.mail.am0.yahoodns.net', 'Yahoo Small Business', 'the more specific row wins'],
    ['mx-aol.mail.gm0.yahoodns.net', 'AOL Mail', 'AOL on Yahoo'],
    ['smtp.secureserver.net', 'GoDaddy Email', 'GoDaddy primary'],
    ['mailstore1.secureserver.net', 'GoDaddy Email', 'GoDaddy secondary'],
    ['mx1.titan.email', 'Titan Email', 'Titan'],
    ['mx3.mail.ovh.net', 'OVHcloud', 'EU zone'],
    ['us-smtp-inbound-1.mimecast.com', 'Mimecast', 'US region'],
    ['mx0a-001b2d01.pphosted.com', 'Proofpoint', 'PPS'],
    ['mx1-us1.ppe-hosted.com', 'Proofpoint Essentials', 'Essentials'],
    ['d123456a.ess.barracudanetworks.com', 'Barracuda Email Gateway Defense', 'ESS'],
    ['cluster1.eu.messagelabs.com', 'Symantec Email Security.cloud', 'primary cluster'],
    ['mx.spamexperts.com', 'SpamExperts', 'hosted cloud'],
    ['filter10.antispamcloud.com', 'SpamExperts', 'local cloud'],
    ['inbound-smtp.us-east-1.amazonaws.com', 'Amazon SES (inbound)', 'region wildcard'],
    ['inbound-smtp.eu-west-1.amazonaws.com', 'Amazon SES (inbound)', 'another region'],
    ['feedback-smtp.us-east-1.amazonses.com', 'Amazon SES (bounce handling)', 'MAIL FROM host'],
    ['mxa.mailgun.org', 'Mailgun (inbound routes)', 'Mailgun routes'],
    ['mx1.improvmx.com', 'ImprovMX', 'forwarding'],
    ['route1.mx.cloudflare.net', 'Cloudflare Email Routing', 'low confidence row'],
    // Negatives: suffixes only on label boundaries.
    ['google.com.evil.example', null, 'the provider name is not at the end'],
    ['evilgoogle.com', null, 'not a label boundary'],
    ['xmail.protection.outlook.com', null, 'mail.protection.outlook.com must be whole labels'],
    ['mail.protection.outlook.com.attacker.net', null, 'suffix in the middle'],
    ['ec2-192-0-2-1.compute-1.amazonaws.com', null, 'an EC2 host is not SES inbound'],
    ['inbound-smtp.amazonaws.com', null, 'the region label is required'],
    ['protonmail.ch.example.org', null, 'suffix in the middle'],
    ['mail.example.com', null, 'self-hosted: no provider can be read'],
    ['', null, 'the root (null MX)'],
  ])('%s → %s (%s)', (host, provider) => {
    expect(providerForMxHost(host)).toBe(provider);
  });

  it('matches case-insensitively and ignores a trailing dot', () => {
    expect(providerForMxHost('ASPMX.L.Google.COM.')).toBe('Google Workspace');
  });
});

describe('matchesHostPattern', () => {
  it.each<[string, string, boolean]>([
    ['a.b.c', 'b.c', true],
    ['b.c', 'b.c', true],
    ['c', 'b.c', false],
    ['xb.c', 'b.c', false],
    ['x.region.example', 'x.*.example', true],
    ['x.example', 'x.*.example', false],
  ])('%s against %s → %s', (host, pattern, matches) => {
    expect(matchesHostPattern(host, pattern)).toBe(matches);
  });
});

describe('MX_PROVIDERS', () => {
  it('gives every row a source and lower-case patterns', () => {
    for (const row of MX_PROVIDERS) {
      expect(row.source.length, row.provider).toBeGreaterThan(5);
      for (const pattern of row.patterns) expect(pattern).toBe(pattern.toLowerCase());
    }
  });

  it('covers the providers the brief names', () => {
    const names = MX_PROVIDERS.map((row) => row.provider);
    for (const wanted of ['Google Workspace', 'Microsoft 365', 'Zoho Mail', 'Proton Mail', 'Fastmail', 'iCloud Mail', 'Yahoo Mail', 'GoDaddy Email', 'Titan Email', 'OVHcloud', 'Mimecast', 'Proofpoint', 'Barracuda Email Gateway Defense', 'Symantec Email Security.cloud', 'SpamExperts', 'Amazon SES (inbound)']) {
      expect(names).toContain(wanted);
    }
  });
});

// providerForMxHost compares a host only with the patterns of its last label; this is the rule it
// must give the same answer as: every pattern in table order, the one with the most labels winning.
describe('providerForMxHost agrees with a scan of the whole table', () => {
  const byScan = (host: string): string | null => {
    let best: { provider: string; labels: number } | null = null;
    for (const row of MX_PROVIDERS) {
      for (const pattern of row.patterns) {
        const labels = pattern.split('.').length;
        if (matchesHostPattern(host, pattern) && (best === null || labels > best.labels)) best = { provider: row.provider, labels };
      }
    }
    return best?.provider ?? null;
  };
  const hosts = MX_PROVIDERS.flatMap((row) => row.patterns.flatMap((pattern) => {
    const concrete = pattern.replaceAll('*', 'eu-west-1');
    return [concrete, `mx1.${concrete}`, `MX2.${concrete.toUpperCase()}.`, `${concrete}.example`, concrete.replace(/^[^.]+\./, 'other.')];
  }));
  it.each(hosts)('%s', (host) => {
    expect(providerForMxHost(host)).toBe(byScan(host));
    expect(providerForMxHost(host)).toBe(byScan(host)); // the second answer comes from the per-host memo
  });
});
