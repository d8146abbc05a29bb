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

/** The providers, in the order they are shown. */
export const PROVIDERS: readonly ProviderSpec[] = [
  {
    id: 'aws',
    name: 'Amazon Web Services',
    feeds: [{ url: 'https://ip-ranges.amazonaws.com/ip-ranges.json', file: 'aws-ip-ranges.json', format: 'aws-json' }],
    services: [{ service: 'EC2', kind: 'rent', label: 'Amazon EC2' }],
    port25: {
      policy: 'blocked-until-lifted',
      source: 'https://repost.aws/knowledge-center/ec2-port-25-throttle',
      note: 'EC2 throttles outbound port 25 by default and lifts it on request',
    },
    mailService: { name: 'Amazon SES', include: 'include:amazonses.com' },
  },
  {
    id: 'google-cloud',
    name: 'Google Cloud',
    feeds: [{ url: 'https://www.gstatic.com/ipranges/cloud.json', file: 'google-cloud-ip-ranges.json', format: 'google-cloud-json' }],
    services: [{ service: 'Google Cloud', kind: 'rent', label: 'Google Cloud' }],
    port25: {
      policy: 'always-blocked',
      source: 'https://cloud.google.com/compute/docs/tutorials/sending-mail',
      note: 'Compute Engine blocks outbound port 25 (a few long-standing projects excepted)',
    },
    mailService: { name: 'Google Workspace', include: 'include:_spf.google.com' },
  },
  {
    id: 'azure',
    name: 'Microsoft Azure',
    feeds: [
      {
        url: 'https://download.microsoft.com/download/7/1/D/71D86715-5596-4529-9B13-DA13A5DE5B63/ServiceTags_Public.json',
        file: 'microsoft-azure-ip-ranges.json',
        format: 'azure-service-tags-json',
      },
    ],
    services: [{ service: 'AzureCloud', kind: 'rent', label: 'Microsoft Azure' }],
    port25: {
      policy: 'blocked-until-lifted',
      source: 'https://learn.microsoft.com/azure/virtual-network/troubleshoot-outbound-smtp-connectivity',
      note: 'Azure blocks outbound port 25 for most subscription types and allows it for Enterprise Agreement subscriptions',
    },
    mailService: { name: 'Microsoft 365 (Exchange Online)', include: 'include:spf.protection.outlook.com' },
  },
  {
    id: 'oracle',
    name: 'Oracle Cloud Infrastructure',
    feeds: [{ url: 'https://docs.oracle.com/iaas/tools/public_ip_ranges.json', file: 'oracle-cloud-ip-ranges.json', format: 'oracle-json' }],
    services: [{ service: 'OCI', kind: 'rent', label: 'Oracle Cloud' }],
    port25: {
      policy: 'blocked-until-lifted',
      source: 'https://docs.oracle.com/en-us/iaas/Content/Email/Concepts/overview.htm',
      note: 'OCI blocks outbound port 25 for new tenancies and lifts it for paid accounts on request; Oracle steers mail to Email Delivery',
    },
    mailService: { name: 'OCI Email Delivery', include: 'include:rp.oracleemaildelivery.com' },
  },
  {
    id: 'digitalocean',
    name: 'DigitalOcean',
    feeds: [{ url: 'https://digitalocean.com/geo/google.csv', file: 'digitalocean.csv', format: 'geofeed-csv' }],
    services: [{ service: 'Droplets', kind: 'rent', label: 'DigitalOcean' }],
    port25: {
      policy: 'blocked-until-lifted',
      source: 'https://docs.digitalocean.com/support/why-is-smtp-blocked/',
      note: 'DigitalOcean blocks port 25 on every Droplet of new accounts; older accounts may still have it open',
    },
    mailService: null,
  },
  {
    id: 'linode',
    name: 'Linode (Akamai Cloud)',
    feeds: [{ url: 'https://geoip.linode.com/', file: 'linode.txt', format: 'geofeed-csv' }],
    services: [{ service: 'Linode', kind: 'rent', label: 'Linode' }],
    port25: {
      policy: 'blocked-until-lifted',
      source: 'https://techdocs.akamai.com/cloud-computing/docs/send-email',
      note: 'Linode restricts outbound SMTP ports on new accounts and lifts the restriction on a support request',
    },
    mailService: null,
  },
  {
    id: 'github',
    name: 'GitHub',
    feeds: [{ url: 'https://api.github.com/meta', file: 'github-ip-ranges.json', format: 'github-meta-json' }],
    services: [
      { service: 'actions', kind: 'runner', label: 'GitHub Actions runners' },
      { service: 'actions_macos', kind: 'runner', label: 'GitHub Actions macOS runners' },
    ],
    port25: {
      policy: 'not-published',
      source: 'https://docs.github.com/en/actions/using-github-hosted-runners/about-github-hosted-runners',
      note: 'GitHub publishes no port-25 policy for hosted runners, which anyone with a repository can start',
    },
    mailService: null,
  },
  {
    id: 'cloudflare',
    name: 'Cloudflare',
    feeds: [
      { url: 'https://www.cloudflare.com/ips-v4', file: 'cloudflare-v4-ip-ranges.txt', format: 'cidr-lines' },
      { url: 'https://www.cloudflare.com/ips-v6', file: 'cloudflare-v6-ip-ranges.txt', format: 'cidr-lines' },
    ],
    services: [{ service: 'edge', kind: 'edge', label: 'Cloudflare edge' }],
    port25: {
      policy: 'always-blocked',
      source: 'https://developers.cloudflare.com/workers/runtime-apis/tcp-sockets/',
      note: 'Workers may open TCP sockets but not to port 25; the edge addresses are shared by every customer',
    },
    mailService: null,
  },
  {
    id: 'fastly',
    name: 'Fastly',
    feeds: [{ url: 'https://api.fastly.com/public-ip-list', file: 'fastly-ip-ranges.json', format: 'fastly-json' }],
    services: [{ service: 'edge', kind: 'edge', label: 'Fastly edge' }],
    port25: {
      policy: 'no-raw-sockets',
      source: 'https://www.fastly.com/documentation/guides/compute/',
      note: 'Fastly Compute makes HTTP requests only; its edge addresses are shared by every customer',
    },
    mailService: null,
  },
  {
    id: 'akamai',
    name: 'Akamai',
    feeds: [
      { url: 'https://techdocs.akamai.com/origin-ip-acl/docs/update-your-origin-server', file: 'akamai-v4-ip-ranges.txt', format: 'cidr-lines' },
      { url: 'https://techdocs.akamai.com/origin-ip-acl/docs/update-your-origin-server', file: 'akamai-v6-ip-ranges.txt', format: 'cidr-lines' },
    ],
    services: [{ service: 'edge', kind: 'edge', label: 'Akamai edge' }],
    port25: {
      policy: 'no-raw-sockets',
      source: 'https://techdocs.akamai.com/edgeworkers/docs/limitations',
      note: 'EdgeWorkers make HTTP sub-requests only; the edge addresses are shared by every customer',
    },
    mailService: null,
  },
];

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
