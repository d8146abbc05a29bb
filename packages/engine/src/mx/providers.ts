/**
 * Mail providers recognised from MX host names (conformance/providers.md §(b) has the full
 * citations; "DC" is the Domain Connect template repository, named by template file).
 *
 * Patterns are matched against the lower-case host name as suffixes on label boundaries, never as
 * substrings: `google.com` matches `smtp.google.com` but not `google.com.evil.example` or
 * `evilgoogle.com`. A `*` label matches exactly one label (`inbound-smtp.*.amazonaws.com`). When
 * several patterns match, the one with the most labels wins, so a specific row (Gmail's consumer MX)
 * beats a broad one (Google Workspace).
 */
import { canonicalName } from '../dns/name.js';

/** How far a row can be trusted: vendor source, consistent third-party sources, or unverified. */
export type MxProviderConfidence = 'high' | 'medium' | 'low';

/** One provider and the MX host patterns that identify it. */
export interface MxProvider {
  provider: string;
  patterns: readonly string[];
  confidence: MxProviderConfidence;
  source: string;
}

/** One row of `MX_PROVIDER_ROWS`: provider, its patterns (separated by spaces), confidence, source. */
type MxProviderRow = readonly [string, string, MxProviderConfidence, string];

/** The provider table, one row a provider. Each row's source says where the pattern comes from. */
const MX_PROVIDER_ROWS: readonly MxProviderRow[] = [
  // Google help "Set up MX records" (smtp.google.com; legacy aspmx.l.google.com, alt1-4; aspmx2-5.googlemail.com); DC google.com.gmail-setup.json
  ['Google Workspace', 'google.com googlemail.com', 'high', 'Google help "Set up MX records"; DC google.com.gmail-setup.json'],
  // jace/mxsniff mxsniffer/providers.py: consumer Gmail MX
  ['Gmail', 'gmail-smtp-in.l.google.com', 'high', 'jace/mxsniff mxsniffer/providers.py'],
  // <domain-with-dashes>.mail.protection.outlook.com; <domain-with-dashes>.<random>.mx.microsoft (c7solutions.com/2024/02/what-is-mx-microsoft)
  ['Microsoft 365', 'mail.protection.outlook.com mx.microsoft', 'high', 'mxrecordchecker.com M365 guide; c7solutions.com/2024/02/what-is-mx-microsoft'],
  // reacherhq/check-if-email-exists core/src/smtp/outlook/mod.rs; DC outlook.com.personalizedoutlookemail.json; jace/mxsniff
  ['Outlook.com', 'olc.protection.outlook.com pamx1.hotmail.com hotmail.com', 'medium', 'reacherhq/check-if-email-exists outlook/mod.rs; DC outlook.com.personalizedoutlookemail.json; jace/mxsniff'],
  // zoho.com/mail/help/adminconsole/configure-email-delivery.html (regional data centres)
  ['Zoho Mail', 'zoho.com zoho.eu zoho.in zoho.com.au zoho.jp', 'high', 'zoho.com/mail/help/adminconsole/configure-email-delivery.html; DC zoho.com.zmail_hosting.json'],
  // mxrecordchecker.com/resources/protonmail-mx-records (mail.protonmail.ch, mailsec.protonmail.ch)
  ['Proton Mail', 'protonmail.ch', 'high', 'mxrecordchecker.com protonmail-mx-records; enthec/webappanalyzer'],
  // fastmail.help/hc/en-us/articles/360060591153 (in1-smtp/in2-smtp.messagingengine.com)
  ['Fastmail', 'messagingengine.com', 'medium', 'fastmail.help/hc/en-us/articles/360060591153'],
  // enthec/webappanalyzer "Apple iCloud Mail" (mail.icloud.com); DC icloud.com.custom_email_domain.json
  ['iCloud Mail', 'mail.icloud.com', 'medium', 'enthec/webappanalyzer; DC icloud.com.custom_email_domain.json'],
  // jace/mxsniff; suped.com Yahoo mail server names (mta5-7.am0.yahoodns.net, regional mx-*.yahoodns.net)
  ['Yahoo Mail', 'yahoodns.net', 'medium', 'jace/mxsniff; suped.com Yahoo mail server names'],
  // jace/mxsniff; suped.com (mx-biz.mail.am0.yahoodns.net, mx1/mx2.biz.mail.yahoo.com)
  ['Yahoo Small Business', 'mx-biz.mail.am0.yahoodns.net biz.mail.yahoo.com', 'medium', 'jace/mxsniff; suped.com'],
  // jace/mxsniff; suped.com (mx-aol.mail.gm0.yahoodns.net)
  ['AOL Mail', 'mx-aol.mail.gm0.yahoodns.net', 'medium', 'jace/mxsniff; suped.com'],
  // DC godaddy.com.professional_mail.json, secureserver.net.professional_mail.json (smtp/mailstore1.secureserver.net)
  ['GoDaddy Email', 'secureserver.net', 'high', 'DC godaddy.com.professional_mail.json; DC secureserver.net.professional_mail.json'],
  // DC titan.email.titan-mail-hosting.json, godaddy.com.cpanel_titanemail.json (mx1/mx2.titan.email)
  ['Titan Email', 'titan.email', 'high', 'DC titan.email.titan-mail-hosting.json; DC godaddy.com.cpanel_titanemail.json'],
  // ovh/ovhcloud-docs PR #235 (mx0-4.mail.ovh.net; Canadian zone under ovh.ca; Exchange ex?.mail.ovh.net)
  ['OVHcloud', 'mail.ovh.net mail.ovh.ca', 'medium', 'ovh/ovhcloud-docs pull request #235'],
  // gist.github.com/wjessop/682989a200deb38a2a1dfbb880fb5cfa (us-smtp-inbound-1/2.mimecast.com); regional mimecast.co.za
  ['Mimecast', 'mimecast.com mimecast.co.za', 'medium', 'gist wjessop/682989a2…; spamresource.com Mimecast guide'],
  // captaindns.com/en/blog/proofpoint-secure-email-gateway (MX to pphosted.com)
  ['Proofpoint', 'pphosted.com', 'medium', 'captaindns.com proofpoint-secure-email-gateway'],
  // excelmicro.kayako.com Proofpoint Essentials articles (*.ppe-hosted.com)
  ['Proofpoint Essentials', 'ppe-hosted.com', 'medium', 'excelmicro.kayako.com Proofpoint Essentials articles'],
  // captaindns.com/en/blog/barracuda-secure-email-gateway (<id>.ess.barracudanetworks.com; regional labels unverified, so the whole domain)
  ['Barracuda Email Gateway Defense', 'barracudanetworks.com', 'medium', 'captaindns.com barracuda-secure-email-gateway'],
  // support.symantec.com/us/en/article.tech247121.html (cluster<N>[a].<region>.messagelabs.com)
  ['Symantec Email Security.cloud', 'messagelabs.com', 'high', 'support.symantec.com article tech247121'],
  // documentation.n-able.com/spamexperts/userguide (Hosted Cloud MX Records)
  ['SpamExperts', 'spamexperts.com spamexperts.eu spamexperts.net antispamcloud.com', 'high', 'documentation.n-able.com/spamexperts/userguide'],
  // docs.aws.amazon.com/ses/latest/dg/receiving-email-mx-record.html (inbound-smtp.<region>.amazonaws.com)
  ['Amazon SES (inbound)', 'inbound-smtp.*.amazonaws.com', 'high', 'docs.aws.amazon.com/ses/latest/dg/receiving-email-mx-record.html'],
  // DC resend.com.mail.json and others: feedback-smtp.<region>.amazonses.com is a MAIL FROM bounce host, not a mailbox
  ['Amazon SES (bounce handling)', 'feedback-smtp.*.amazonses.com', 'high', 'DC resend.com.mail.json, autosend.com.email.json'],
  // DC goentri.com.kajabi.json, realgeeks.com.website_and_crm.json (mxa/mxb.mailgun.org)
  ['Mailgun (inbound routes)', 'mailgun.org', 'high', 'DC goentri.com.kajabi.json; DC vohtrah.com.mailgun-sender.json'],
  // DC sendgrid.com.domain-auth-manual.json (mx.sendgrid.net)
  ['Twilio SendGrid (Inbound Parse)', 'mx.sendgrid.net', 'high', 'DC sendgrid.com.domain-auth-manual.json'],
  // DC nanimail.com.email.json (inbound.postmarkapp.com)
  ['Postmark (inbound)', 'inbound.postmarkapp.com', 'high', 'DC nanimail.com.email.json'],
  // DC improvmx.com.email.json
  ['ImprovMX', 'improvmx.com', 'high', 'DC improvmx.com.email.json'],
  // DC forwardemail.net.email.json
  ['Forward Email', 'forwardemail.net', 'high', 'DC forwardemail.net.email.json'],
  // DC wordpress.com.email-forwarding.json
  ['WordPress.com email forwarding', 'smtp-fwd.wordpress.com', 'high', 'DC wordpress.com.email-forwarding.json'],
  // jace/mxsniff (pb-mx1..8.pobox.com)
  ['Pobox', 'pobox.com', 'medium', 'jace/mxsniff'],
  // jace/mxsniff (*.mail.dreamhost.com)
  ['DreamHost', 'mail.dreamhost.com', 'medium', 'jace/mxsniff'],
  // The rows below are widely used but no citable page or template was found (providers.md, "not verified").
  ['Rackspace Email', 'emailsrvr.com', 'low', 'unverified (providers.md §(b) known patterns)'],
  ['Yandex 360', 'mx.yandex.net', 'low', 'unverified (providers.md §(b) known patterns)'],
  ['Cisco Secure Email', 'iphmx.com', 'low', 'unverified (providers.md §(b) known patterns)'],
  ['Trend Micro Email Security', 'tmes.trendmicro.com tmes.trendmicro.eu', 'low', 'unverified (providers.md §(b) known patterns)'],
  ['Hornetsecurity', 'hornetsecurity.com', 'low', 'unverified (providers.md §(b) known patterns)'],
  ['Sophos Email', 'hydra.sophos.com', 'low', 'unverified (providers.md §(b) known patterns)'],
  ['Cloudflare Email Routing', 'mx.cloudflare.net', 'low', 'unverified (providers.md §(b) known patterns)'],
  ['mailbox.org', 'mailbox.org', 'low', 'unverified (providers.md §(b) known patterns)'],
  ['IONOS', 'ionos.com ionos.de ionos.co.uk ionos.fr ionos.es', 'low', 'unverified (providers.md §(b): mx00/mx01.ionos.<tld>)'],
  ['Namecheap Private Email', 'privateemail.com', 'low', 'unverified (providers.md §(b) known patterns)'],
  ['Tencent (QQ Mail / Exmail)', 'qq.com', 'low', 'unverified (providers.md §(b) known patterns)'],
];

/** The provider table. Each row's `source` says where the pattern comes from. */
export const MX_PROVIDERS: readonly MxProvider[] = MX_PROVIDER_ROWS.map(([provider, patterns, confidence, source]) => ({ provider, patterns: patterns.split(' '), confidence, source }));

/**
 * True when `host` equals `pattern` or lies below it, comparing whole labels from the right; a `*`
 * label in the pattern matches any one label.
 */
export function matchesHostPattern(host: string, pattern: string): boolean {
  return labelsMatch(canonicalName(host).split('.'), pattern.split('.'));
}

function labelsMatch(hostLabels: readonly string[], patternLabels: readonly string[]): boolean {
  if (hostLabels.length < patternLabels.length) return false;
  const offset = hostLabels.length - patternLabels.length;
  for (let index = 0; index < patternLabels.length; index++) {
    const label = patternLabels[index];
    if (label !== '*' && label !== hostLabels[offset + index]) return false;
  }
  return true;
}

type CompiledPattern = { provider: string; labels: readonly string[] };

/** Every pattern split into labels once, in table order (this runs for every MX host of every check). */
const COMPILED_PATTERNS: readonly CompiledPattern[] = MX_PROVIDERS.flatMap((row) =>
  row.patterns.map((pattern) => ({ provider: row.provider, labels: pattern.split('.') })),
);

/**
 * The patterns by their last label, each list in table order, so a host is compared only with the
 * patterns of its own top-level domain. A pattern ending in `*` would match any last label: with one
 * in the table, every host is compared with every pattern.
 */
const PATTERNS_BY_LAST_LABEL: ReadonlyMap<string, readonly CompiledPattern[]> | null = (() => {
  const byLast = new Map<string, CompiledPattern[]>();
  for (const pattern of COMPILED_PATTERNS) {
    const last = pattern.labels[pattern.labels.length - 1]!;
    if (last === '*') return null;
    const list = byLast.get(last) ?? [];
    list.push(pattern);
    byLast.set(last, list);
  }
  return byLast;
})();
const NO_PATTERNS: readonly CompiledPattern[] = [];

/**
 * Hosts whose provider is remembered: the table is compiled in, so an answer never goes stale, and a
 * warm check asks again for the same few hosts (a provider's MX hosts serve thousands of domains).
 * Past this many hosts the memo starts again.
 */
export const MX_PROVIDER_MEMO_ENTRIES = 10_000;
const providerByHost = new Map<string, string | null>();

/** The provider an MX host belongs to (the matching pattern with the most labels, the first in the table on a tie), or null. */
export function providerForMxHost(host: string): string | null {
  const known = providerByHost.get(host);
  if (known !== undefined) return known;
  const provider = matchProvider(host);
  if (providerByHost.size >= MX_PROVIDER_MEMO_ENTRIES) providerByHost.clear();
  providerByHost.set(host, provider);
  return provider;
}

function matchProvider(host: string): string | null {
  const canonical = canonicalName(host);
  if (canonical === '') return null;
  const hostLabels = canonical.split('.');
  const candidates = PATTERNS_BY_LAST_LABEL === null ? COMPILED_PATTERNS : (PATTERNS_BY_LAST_LABEL.get(hostLabels[hostLabels.length - 1]!) ?? NO_PATTERNS);
  let best: { provider: string; labels: number } | undefined;
  for (const pattern of candidates) {
    const labels = pattern.labels.length;
    if (labelsMatch(hostLabels, pattern.labels) && (!best || labels > best.labels)) best = { provider: pattern.provider, labels };
  }
  return best?.provider ?? null;
}
