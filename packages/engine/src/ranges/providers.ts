import type { AttackKind, FeedFormat, Port25Policy, ProviderId } from './types.js';

/** One published feed: where it lives, its format, and the file name its local copy has. */
export interface FeedSpec {
  /** The official HTTPS address. */
  url: string;
  /** The file name `ranges update --from DIR` reads (the names of `fixtures/provider-ranges/`). */
  file: string;
  format: FeedFormat;
}

/** A provider: its feeds, the services of them that strangers can rent or reach, its port-25 policy. */
export interface ProviderSpec {
  id: ProviderId;
  name: string;
  feeds: FeedSpec[];
  /**
   * The services kept, by the name the feed gives them. Services not listed are ignored: AWS's
   * `AMAZON` is the superset of everything (Amazon SES included), Azure's other tags are
   * Microsoft's own services, GitHub's other lists are GitHub's own servers.
   */
  services: { service: string; kind: AttackKind; label: string }[];
  /** The published outbound port-25 policy and the page it is read from. */
  port25: { policy: Port25Policy; source: string; note: string };
  /**
   * What to authorise instead of the provider's compute space: its outbound mail service's SPF
   * include, when it has one (that service checks who may send as which domain).
   */
  mailService: { name: string; include: string } | null;
}

/**
 * Azure service tags inside `AzureCloud` that are Microsoft's own mail senders: Exchange Online
 * Protection (the ranges of `spf.protection.outlook.com`, Microsoft 365's own SPF) and Dynamics 365
 * marketing mail. They are never reported, in any provider's space.
 */
export const FIRST_PARTY_MAIL_TAGS: readonly string[] = ['EOPExternalPublishedIPs', 'Dynamics365ForMarketingEmail'];

/** One provider as a row of `PROVIDER_ROWS`: id, name, feeds [url, file, format], services [service, kind, label], port 25 [policy, source, note], mail service [name, include] or null. */
type ProviderRow = readonly [
  ProviderId,
  string,
  readonly (readonly [string, string, FeedFormat])[],
  readonly (readonly [string, AttackKind, string])[],
  readonly [Port25Policy, string, string],
  readonly [string, string] | null,
];

/** The providers, in the order they are shown: one row each (see `ProviderRow` for the columns). */
const PROVIDER_ROWS: readonly ProviderRow[] = [
  ['aws', 'Amazon Web Services', [['https://ip-ranges.amazonaws.com/ip-ranges.json', 'aws-ip-ranges.json', 'aws-json']], [['EC2', 'rent', 'Amazon EC2']], ['blocked-until-lifted', 'https://repost.aws/knowledge-center/ec2-port-25-throttle', 'EC2 throttles outbound port 25 by default and lifts it on request'], ['Amazon SES', 'include:amazonses.com']],
  ['google-cloud', 'Google Cloud', [['https://www.gstatic.com/ipranges/cloud.json', 'google-cloud-ip-ranges.json', 'google-cloud-json']], [['Google Cloud', 'rent', 'Google Cloud']], ['always-blocked', 'https://cloud.google.com/compute/docs/tutorials/sending-mail', 'Compute Engine blocks outbound port 25 (a few long-standing projects excepted)'], ['Google Workspace', 'include:_spf.google.com']],
  ['azure', 'Microsoft Azure', [['https://download.microsoft.com/download/7/1/D/71D86715-5596-4529-9B13-DA13A5DE5B63/ServiceTags_Public.json', 'microsoft-azure-ip-ranges.json', 'azure-service-tags-json']], [['AzureCloud', 'rent', 'Microsoft Azure']], ['blocked-until-lifted', 'https://learn.microsoft.com/azure/virtual-network/troubleshoot-outbound-smtp-connectivity', 'Azure blocks outbound port 25 for most subscription types and allows it for Enterprise Agreement subscriptions'], ['Microsoft 365 (Exchange Online)', 'include:spf.protection.outlook.com']],
  ['oracle', 'Oracle Cloud Infrastructure', [['https://docs.oracle.com/iaas/tools/public_ip_ranges.json', 'oracle-cloud-ip-ranges.json', 'oracle-json']], [['OCI', 'rent', 'Oracle Cloud']], ['blocked-until-lifted', 'https://docs.oracle.com/en-us/iaas/Content/Email/Concepts/overview.htm', 'OCI blocks outbound port 25 for new tenancies and lifts it for paid accounts on request; Oracle steers mail to Email Delivery'], ['OCI Email Delivery', 'include:rp.oracleemaildelivery.com']],
  ['digitalocean', 'DigitalOcean', [['https://digitalocean.com/geo/google.csv', 'digitalocean.csv', 'geofeed-csv']], [['Droplets', 'rent', 'DigitalOcean']], ['blocked-until-lifted', 'https://docs.digitalocean.com/support/why-is-smtp-blocked/', 'DigitalOcean blocks port 25 on every Droplet of new accounts; older accounts may still have it open'], null],
  ['linode', 'Linode (Akamai Cloud)', [['https://geoip.linode.com/', 'linode.txt', 'geofeed-csv']], [['Linode', 'rent', 'Linode']], ['blocked-until-lifted', 'https://techdocs.akamai.com/cloud-computing/docs/send-email', 'Linode restricts outbound SMTP ports on new accounts and lifts the restriction on a support request'], null],
  ['github', 'GitHub', [['https://api.github.com/meta', 'github-ip-ranges.json', 'github-meta-json']], [['actions', 'runner', 'GitHub Actions runners'], ['actions_macos', 'runner', 'GitHub Actions macOS runners']], ['not-published', 'https://docs.github.com/en/actions/using-github-hosted-runners/about-github-hosted-runners', 'GitHub publishes no port-25 policy for hosted runners, which anyone with a repository can start'], null],
  ['cloudflare', 'Cloudflare', [['https://www.cloudflare.com/ips-v4', 'cloudflare-v4-ip-ranges.txt', 'cidr-lines'], ['https://www.cloudflare.com/ips-v6', 'cloudflare-v6-ip-ranges.txt', 'cidr-lines']], [['edge', 'edge', 'Cloudflare edge']], ['always-blocked', 'https://developers.cloudflare.com/workers/runtime-apis/tcp-sockets/', 'Workers may open TCP sockets but not to port 25; the edge addresses are shared by every customer'], null],
  ['fastly', 'Fastly', [['https://api.fastly.com/public-ip-list', 'fastly-ip-ranges.json', 'fastly-json']], [['edge', 'edge', 'Fastly edge']], ['no-raw-sockets', 'https://www.fastly.com/documentation/guides/compute/', 'Fastly Compute makes HTTP requests only; its edge addresses are shared by every customer'], null],
  ['akamai', 'Akamai', [['https://techdocs.akamai.com/origin-ip-acl/docs/update-your-origin-server', 'akamai-v4-ip-ranges.txt', 'cidr-lines'], ['https://techdocs.akamai.com/origin-ip-acl/docs/update-your-origin-server', 'akamai-v6-ip-ranges.txt', 'cidr-lines']], [['edge', 'edge', 'Akamai edge']], ['no-raw-sockets', 'https://techdocs.akamai.com/edgeworkers/docs/limitations', 'EdgeWorkers make HTTP sub-requests only; the edge addresses are shared by every customer'], null],
];

/** The providers, in the order they are shown. */
export const PROVIDERS: readonly ProviderSpec[] = PROVIDER_ROWS.map(([id, name, feeds, services, [policy, source, note], mail]) => ({
  id,
  name,
  feeds: feeds.map(([url, file, format]) => ({ url, file, format })),
  services: services.map(([service, kind, label]) => ({ service, kind, label })),
  port25: { policy, source, note },
  mailService: mail === null ? null : { name: mail[0], include: mail[1] },
}));

/** How people name a provider's service ("Amazon EC2", "GitHub Actions runners"). */
export function serviceLabel(id: ProviderId, service: string): string {
  return providerSpec(id).services.find((s) => s.service === service)?.label ?? `${providerSpec(id).name} ${service}`;
}

/** The provider with this id. */
export function providerSpec(id: ProviderId): ProviderSpec {
  return PROVIDERS.find((p) => p.id === id)!;
}

/** Words for a port-25 policy, ending in the point: friction, not protection. */
export function describePort25(policy: Port25Policy): string {
  switch (policy) {
    case 'blocked-until-lifted':
      return 'outbound port 25 is blocked by default and lifted on request';
    case 'always-blocked':
      return 'outbound port 25 is blocked';
    case 'no-raw-sockets':
      return 'the platform opens no SMTP connections of its own';
    case 'not-published':
      return 'no outbound port-25 policy is published';
  }
}
