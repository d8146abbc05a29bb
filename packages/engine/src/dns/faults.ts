/**
 * Fault injection: what a misbehaving DNS server can do to one query, as a plan that both the
 * embedded DNS server (on the wire) and `FaultyResolver` (in memory) apply. The same plan gives the
 * same answer kind through either path, so an analyzer's temperror handling can be tested without a
 * socket and then confirmed over the network.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { canonicalName } from './name.js';
import { checkSourceOf, type CheckSource, type DnsAnswer, type RecordType, type Resolver } from './types.js';

/**
 * One way a server can fail a query.
 * - `servfail`, `refused`: the server answers with that RCODE (RFC 1035 §4.1.1).
 * - `drop`: no answer at all; the client times out.
 * - `delay`: the normal answer, `ms` milliseconds late.
 * - `truncate`: the TC bit (RFC 1035 §4.1.1) with an empty answer. By default only over UDP, so a
 *   client that retries over TCP (RFC 2181 §9) still gets the records; with `tcp: true` the TCP
 *   answer is truncated too, which no client can use.
 * - `malformed`: bytes that do not parse as a DNS message answering the query.
 */
export type Fault =
  | { kind: 'servfail' }
  | { kind: 'refused' }
  | { kind: 'drop' }
  | { kind: 'delay'; ms: number }
  | { kind: 'truncate'; tcp?: boolean }
  | { kind: 'malformed' };

/** A fault for one name (any case, with or without the trailing dot), optionally for one type only. */
export interface FaultRule {
  name: string;
  type?: RecordType;
  fault: Fault;
}

/** The faults in force. The first rule that matches a query applies; no rule means a normal answer. */
export type FaultPlan = readonly FaultRule[];

/** The fault `plan` applies to a query for `name`/`type`, or undefined for a normal answer. */
export function faultFor(plan: FaultPlan, name: string, type: RecordType | undefined): Fault | undefined {
  const canonical = canonicalName(name);
  for (const rule of plan) {
    if (canonicalName(rule.name) !== canonical) continue;
    if (rule.type !== undefined && rule.type !== type) continue;
    return rule.fault;
  }
  return undefined;
}

/** Options of `FaultyResolver`. */
export interface FaultyResolverOptions {
  /**
   * How long a dropped query waits before it reports `timeout`, in milliseconds. 0 (the default)
   * answers at once: tests of the mapping need not wait for a real client's timeout.
   */
  dropAfterMs?: number;
}

/**
 * Wraps a resolver and applies a `FaultPlan` in memory, answering what a client of a faulty server
 * would see: servfail → `servfail`, refused → `refused`, drop → `timeout`, delay → the inner answer
 * late, truncate over UDP only → the inner answer (the client retried over TCP), truncate over TCP
 * too → `malformed`, malformed → `malformed`.
 */
export class FaultyResolver implements Resolver {
  private plan: FaultPlan;
  private readonly dropAfterMs: number;

  constructor(
    private readonly inner: Resolver,
    plan: FaultPlan,
    options: FaultyResolverOptions = {},
  ) {
    this.plan = plan;
    this.dropAfterMs = options.dropAfterMs ?? 0;
  }

  /** Where the answers come from: the wrapped resolver's source. */
  get source(): CheckSource {
    return checkSourceOf(this.inner);
  }

  /** Replaces the plan; queries already waiting keep the fault they started with. */
  setFaults(plan: FaultPlan): void {
    this.plan = plan;
  }

  async resolve<T extends RecordType>(name: string, type: T): Promise<DnsAnswer<T>> {
    const fault = faultFor(this.plan, name, type);
    if (!fault) return this.inner.resolve(name, type);
    switch (fault.kind) {
      case 'servfail':
        return { kind: 'error', reason: 'servfail', detail: 'injected fault' };
      case 'refused':
        return { kind: 'error', reason: 'refused', detail: 'injected fault' };
      case 'drop':
        if (this.dropAfterMs > 0) await sleep(this.dropAfterMs);
        return { kind: 'error', reason: 'timeout', detail: 'injected fault: the query was dropped' };
      case 'delay':
        await sleep(fault.ms);
        return this.inner.resolve(name, type);
      case 'truncate':
        // RFC 2181 §9: a truncated UDP answer is retried over TCP, which answers in full.
        if (!fault.tcp) return this.inner.resolve(name, type);
        return { kind: 'error', reason: 'malformed', detail: 'injected fault: truncated even over TCP' };
      case 'malformed':
        return { kind: 'error', reason: 'malformed', detail: 'injected fault' };
    }
  }
}
