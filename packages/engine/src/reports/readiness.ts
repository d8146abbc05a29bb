/**
 * What enforcement would break: for `p=quarantine` and `p=reject`, the messages of the window that
 * failed DMARC (RFC 7489 §6.6.4: the policy applies to mail that fails DMARC; RFC 9989 keeps the
 * rule), their share, and every source behind them; the verdict, and the blockers: the legitimate
 * senders whose mail would be lost, each with its exact fix. RFC 9989 §"Policy Enforcement
 * Considerations": legitimate unaligned streams MUST be addressed before enforcement.
 *
 * Quarantine and reject act on the same failing messages (one lands in spam, the other is refused),
 * so their counts are the same; both are given because the approver asks about one or the other.
 */
import type { SenderSummary } from './senders.js';

/**
 * The longest list a summary, an answer or an alert gives (senders, blockers, selectors, sources):
 * the rest is counted in a `…LeftOut` field beside it. Forged reports can name any number of
 * sources; what a person reads (and a webhook carries) stays bounded.
 */
export const MAX_SUMMARY_LIST = 100;

/** The first MAX_SUMMARY_LIST of `list`, and how many were left out. */
export function capList<T>(list: readonly T[], max = MAX_SUMMARY_LIST): { items: T[]; leftOut: number } {
  return { items: list.slice(0, max), leftOut: Math.max(0, list.length - max) };
}

/** What one policy would have acted on. */
export interface EnforcementImpact {
  /** Messages that would have failed: every failing message, unauthorised ones included. */
  messages: number;
  /** Their share of all messages, from 0 to 1. */
  share: number;
  /** The failing sources, most failing messages first: at most MAX_SUMMARY_LIST. */
  senders: string[];
  /** Failing sources beyond the list (counted in `messages`, not named). */
  sendersLeftOut: number;
}

/** A legitimate sender that would be hurt, and the change that fixes it. */
export interface ReadinessBlocker {
  source: string;
  provider: string | null;
  /** Its messages that would have failed. */
  messages: number;
  fix: string;
}

/** The answer to "can this domain move to quarantine or reject?". */
export interface Readiness {
  reject: EnforcementImpact;
  quarantine: EnforcementImpact;
  /** `ready` when no legitimate sender fails and there is mail to judge by. */
  verdict: 'ready' | 'not-ready';
  /** The legitimate failing senders only, most messages first: at most MAX_SUMMARY_LIST. */
  blockers: ReadinessBlocker[];
  /** Blockers beyond the list (counted in `summary`). */
  blockersLeftOut: number;
  /** The answer in one line: "ready", or "N messages from K legitimate senders would be rejected: fix these first". */
  summary: string;
  /** Messages seen in the window. */
  total: number;
}

/** The readiness of a domain from its senders (see `summariseSenders`). */
export function readiness(senders: readonly SenderSummary[], options: { domain?: string; days?: number } = {}): Readiness {
  const total = senders.reduce((sum, s) => sum + s.messages, 0);
  const failing = senders.filter((s) => s.failing > 0).sort((a, b) => b.failing - a.failing || (a.source < b.source ? -1 : 1));
  const messages = failing.reduce((sum, s) => sum + s.failing, 0);
  const named = capList(failing);
  const impact = (): EnforcementImpact => ({ messages, share: total === 0 ? 0 : messages / total, senders: named.items.map((s) => s.source), sendersLeftOut: named.leftOut });
  const allBlockers: ReadinessBlocker[] = failing
    .filter((s) => s.class === 'legitimate')
    .map((s) => ({ source: s.source, provider: s.provider, messages: s.failing, fix: s.fix ?? `sign all its mail with your own domain (d=${options.domain ?? 'your domain'})` }));
  const blocked = allBlockers.reduce((sum, b) => sum + b.messages, 0);
  const blockers = capList(allBlockers);
  let summary: string;
  if (total === 0) summary = `no aggregate reports${options.domain ? ` for ${options.domain}` : ''}${options.days ? ` in the last ${options.days} days` : ''}: nothing to judge by yet`;
  else if (allBlockers.length === 0) summary = 'ready';
  else summary = `${blocked} ${blocked === 1 ? 'message' : 'messages'} from ${allBlockers.length} legitimate ${allBlockers.length === 1 ? 'sender' : 'senders'} would be rejected: fix these first`;
  return { reject: impact(), quarantine: impact(), verdict: total > 0 && allBlockers.length === 0 ? 'ready' : 'not-ready', blockers: blockers.items, blockersLeftOut: blockers.leftOut, summary, total };
}
