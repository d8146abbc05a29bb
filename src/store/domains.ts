/** Sending domains and their DNS records, and their store. */
import type { Page, PageRequest, Timestamp } from './page-types.js';

/** A DNS record the service asks the domain's owner to publish (spec: "DNS record"). */
export interface DnsRecord {
  id: string;
  recordType: string;
  recordTypeName: string;
  domain: string;
  name: string;
  value: string;
  ttl: string;
  priority: number | null;
  status: string;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  deletedAt: Timestamp | null;
}

/** TLS mode of a sending domain (spec: Domain `tls`). */
export type TlsMode = 'opportunistic' | 'enforced';

/** A sending domain as stored (spec: "Domain", without `object` and `event`, plus `deletedAt`). */
export interface Domain {
  id: string;
  organizationId: string;
  domain: string;
  status: string;
  userVerifiedDomain: boolean;
  systemVerified: boolean;
  customReturnPath: string | null;
  trackingSubdomain: string | null;
  isClickTrackingEnabled: boolean;
  isOpenTrackingEnabled: boolean;
  tls: TlsMode;
  isTrackingDomain: boolean;
  isSendingEmailEnabled: boolean;
  isReceivingEmailEnabled: boolean;
  verificationFailedReason: string | null;
  dnsRecords: DnsRecord[];
  lastVerifiedAt: Timestamp | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
  /** Set by a soft delete; a deleted domain is invisible to every read. */
  deletedAt: Timestamp | null;
}

/** The fields a domain update may change (all optional: only those given change). */
export interface DomainPatch {
  isClickTrackingEnabled?: boolean;
  isOpenTrackingEnabled?: boolean;
  isSendingEmailEnabled?: boolean;
  isReceivingEmailEnabled?: boolean;
  tls?: TlsMode;
}

/** Sending domains and their DNS records. */
export interface DomainStore {
  add(domain: Domain): Promise<void>;
  /** A non-deleted domain, its DNS records filtered to the non-deleted ones. */
  get(organizationId: string, id: string): Promise<Domain | undefined>;
  /** Non-deleted domains, newest first. */
  list(organizationId: string, page: PageRequest): Promise<Page<Domain>>;
  /** Applies the fields given and sets `updatedAt`; undefined if not found (or deleted). */
  update(organizationId: string, id: string, patch: DomainPatch, now: Timestamp): Promise<Domain | undefined>;
  /**
   * Soft delete: sets `deletedAt` and `updatedAt` on the domain and on its live DNS records.
   * Returns the domain as deleted, with the records that the deletion removed; undefined if not found.
   */
  softDelete(organizationId: string, id: string, now: Timestamp): Promise<Domain | undefined>;
}
