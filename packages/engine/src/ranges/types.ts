/**
 * Shared infrastructure: address space that strangers can rent or reach (cloud compute, hosted CI
 * runners, CDN and proxy edges), as its owners publish it. The types of the data and of what a check
 * reports when an SPF record lets part of it pass (BreakSPF, Wang et al., NDSS 2024).
 */

/** The providers whose published ranges are classified. A closed union: the data names no others. */
export type ProviderId = 'aws' | 'google-cloud' | 'azure' | 'oracle' | 'digitalocean' | 'linode' | 'github' | 'cloudflare' | 'fastly' | 'akamai';

/**
 * How an attacker lands in a service's space:
 * - `rent`: rent a server or a fixed address there (a VM, an Elastic IP) and keep trying until the
 *   address is inside the authorised block;
 * - `runner`: start a job (a hosted CI runner) that gets an address from anywhere in the pool;
 * - `edge`: relay through a CDN or proxy edge (serverless functions at the edge) whose exits are shared.
 */
export type AttackKind = 'rent' | 'runner' | 'edge';

/**
 * A provider's published outbound port-25 policy for this space:
 * - `blocked-until-lifted`: blocked by default, lifted on request (or for some account types);
 * - `always-blocked`: blocked for everyone (with at most rare, documented exceptions);
 * - `no-raw-sockets`: the platform opens no SMTP connection of its own (only HTTP through the edge);
 * - `not-published`: the provider publishes no policy.
 * Whatever it is, it is friction for an attacker, not protection: the addresses still pass SPF.
 */
export type Port25Policy = 'blocked-until-lifted' | 'always-blocked' | 'no-raw-sockets' | 'not-published';

/** The official formats of the feeds (see src/ranges/parse.ts). */
export type FeedFormat = 'aws-json' | 'google-cloud-json' | 'azure-service-tags-json' | 'oracle-json' | 'geofeed-csv' | 'cidr-lines' | 'fastly-json' | 'github-meta-json';

/** One range set of a provider's service, as sorted, merged, inclusive intervals. */
export interface RangeCategory {
  provider: ProviderId;
  /** The service as the feed names it (`EC2`, `AzureCloud`, `actions`…). */
  service: string;
  kind: AttackKind;
  /** IPv4 intervals as numbers: `v4Starts[i]`…`v4Ends[i]`, sorted, disjoint, non-adjacent. */
  v4Starts: Float64Array;
  v4Ends: Float64Array;
  /** IPv6 intervals as 128-bit integers, same rules. */
  v6Starts: bigint[];
  v6Ends: bigint[];
  /** Addresses held, per family. */
  ipv4Addresses: number;
  ipv6Addresses: number;
}

/** Where one provider's data came from and when the provider published it. */
export interface RangeSource {
  provider: ProviderId;
  /** The official URL of the feed, or the file it was read from. */
  url: string;
  /** The feed's own date (`createDate`, `creationTime`, `changeNumber`…), as YYYY-MM-DD; null when it has none. */
  date: string | null;
  /** The date read (the feed's own date when it gives one, else when it was fetched). */
  readAt: string;
  /** Prefixes the feed held in the parts that were kept. */
  prefixes: number;
}

/** Loaded provider data, ready to classify with. Immutable once built. */
export interface RangeData {
  /** When the data file was written (ISO 8601). */
  generatedAt: string;
  /** The oldest source date: how current the data is (YYYY-MM-DD). */
  date: string;
  sources: RangeSource[];
  categories: RangeCategory[];
  /** Where the data was read from: the shipped snapshot or a file given with `--ranges`. */
  origin: string;
}

/** How serious an overlap is (see `classify.ts` for the thresholds). */
export type ExposureSeverity = 'critical' | 'warning';

/** One provider service's addresses that pass SPF through one term. */
export interface SharedInfrastructureExposure {
  provider: ProviderId;
  /** The provider's name as people know it ("Amazon Web Services"). */
  providerName: string;
  service: string;
  /** The service as people name it ("Amazon EC2", "GitHub Actions runners"). */
  label: string;
  kind: AttackKind;
  /** The domain whose SPF is checked: the name itself or, under relaxed alignment, its organizational domain. */
  checkedDomain: string;
  /** The record that holds the term (the checked domain or one it includes). */
  recordDomain: string;
  /** The term that authorises the addresses, as written in that record (`ip4:3.224.0.0/16`). */
  term: string;
  /** The path from the checked domain's record to it (`include:_spf.example.com → ip4:3.224.0.0/16`). */
  path: string;
  /** Passing addresses in the service's space, per family (IPv6 counts above 2^53 are rounded). */
  ipv4Addresses: number;
  ipv6Addresses: number;
  severity: ExposureSeverity;
  port25: { policy: Port25Policy; source: string };
}

/** Part of the "maybe" set (depends on terms known only at delivery) that lies in shared space. */
export interface SharedInfrastructureMaybe {
  checkedDomain: string;
  provider: ProviderId;
  providerName: string;
  service: string;
  label: string;
  ipv4Addresses: number;
  ipv6Addresses: number;
}

/** `details.spf.sharedInfrastructure`: what of the SPF pass set lies in shared infrastructure. */
export interface SharedInfrastructureReport {
  /** The worst exposure: `critical` makes an enforcing domain spoofable; `none` when nothing overlaps. */
  severity: ExposureSeverity | 'none';
  /** Each provider service and term whose addresses pass, biggest first. */
  exposures: SharedInfrastructureExposure[];
  /** Shared space that passes or not depending on the message (never counted as critical). */
  maybe: SharedInfrastructureMaybe[];
  /** The provider data used. */
  data: {
    /** Its oldest source date (YYYY-MM-DD). */
    date: string;
    /** Days between that date and the check. */
    ageDays: number;
    /** Older than `RANGES_STALE_AFTER_DAYS` (an operator refreshes it with `spoof-checker ranges update`). */
    stale: boolean;
    origin: string;
  };
}
