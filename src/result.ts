import type { Finding } from './findings.js';

/** `verdict` of the Spoof check result. */
export type Verdict = 'spoofable' | 'partially_protected' | 'protected';
/** Where a forged message most likely lands. */
export type InboxOutcome = 'delivered' | 'spam' | 'rejected';

/**
 * The spec's "Spoof check result" (`../shared/spec/email-service-api.md`), every documented field
 * with its type, plus `details`: the facts behind the answer. Fields the spec types as string are
 * null where there is nothing to report (the reference service does the same).
 */
export interface SpoofCheckResult {
  domain: string;
  resolvedAt: string;
  responseTimeMs: number;
  spoofable: boolean;
  verdict: Verdict;
  headline: string;
  summary: string;
  inboxOutcome: InboxOutcome;
  dmarc: {
    published: boolean;
    policy: string | null;
    subdomainPolicy: string | null;
    percentage: number | null;
    rawRecord: string | null;
  };
  spf: {
    published: boolean;
    qualifier: string | null;
    lookupCount: number;
    rawRecord: string | null;
  };
  dkim: {
    published: boolean;
    selector: string | null;
    keyLength: number | null;
  };
  mx: {
    published: boolean;
    provider: string | null;
  };
  reasons: Finding[];
  nextStep: { title: string; body: string; href: string };
  subdomainNote: string | null;
  /** Added beyond the spec: what lies behind the fields above. */
  details: Record<string, unknown>;
}
