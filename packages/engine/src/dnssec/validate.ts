/**
 * A validating stub (RFC 4033 §7, RFC 4035 §4.9, §5): every question goes out with DO and CD
 * (`RawQuery`), and the answer is validated here, top-down from a trust anchor:
 *
 * - Zone cuts from the anchor to the signer (RFC 4035 §5.2, RFC 6840 §6.1): `DS <name>` at each
 *   label; a signed DS RRset is a secure delegation; a signed NSEC/NSEC3 at the name with NS and
 *   without DS and SOA proves an insecure one (RFC 6840 §4.4); an NSEC3 opt-out span covering it
 *   does too (RFC 5155 §8.6, §6); a DS whose algorithms or digests are all unsupported makes the
 *   zone insecure (RFC 4035 §5.2, RFC 6840 §5.2).
 * - DNSKEY: authentic when one RRSIG over the set verifies with a key a DS (or the anchor) names:
 *   any single valid path (RFC 6840 §5.11); revoked (RFC 5011) and non-zone keys are ignored.
 * - RRSIG (RFC 4035 §5.3.1): signer is the zone, labels, serial-arithmetic window (RFC 4034
 *   §3.1.5) with unbound's skew, canonical signed data from the raw octets, any valid signature
 *   wins (RFC 6840 §5.4), at most `MAX_SIGNATURES_PER_RRSET` tried.
 * - Wildcard answers need the proof that the name itself does not exist (RFC 4035 §5.3.4, RFC 5155 §8.8).
 * - Denials: NSEC (RFC 4035 §5.4, RFC 6840 §4.1, §4.3) and NSEC3 (RFC 5155 §8: closest encloser,
 *   next closer, wildcard; opt-out ⇒ insecure, §9.2, as unbound does; more than
 *   `MAX_NSEC3_ITERATIONS` ⇒ insecure, RFC 9276 §3.2).
 * - CNAME chains: each link validated in its own zone; the weakest link counts (RFC 4035 §5).
 *
 * Work is capped (signatures per RRset, NSEC3 hashes per answer, chain length, queries per
 * validation), so a hostile zone cannot burn CPU (CVE-2023-50387, CVE-2023-50868).
 *
 * The walk down the cuts is one after another (each zone's keys authenticate its child's DS), but
 * the questions it asks are known once the signer is: the DS and DNSKEY of every label from the
 * deepest zone already known down to it. They are asked at once (`prefetchChain`,
 * `MAX_CHAIN_LEVELS_AT_ONCE`, `MAX_VALIDATION_QUERIES_IN_FLIGHT`) and the walk reads the answers in its
 * own order, so every rule above applies as before and an answer it does not reach is never used.
 */
import pLimit, { type LimitFunction } from 'p-limit';
import {
  groupRRsets,
  isSubdomain,
  labelCount,
  lastLabels,
  parentOf,
  type RawMessage,
  type RawRecord,
  type RawRRset,
  compareNames,
  readName,
  splitLabels,
  TYPE,
  typeName,
} from '../dns/canonical.js';
import {
  ALGORITHM_NAMES,
  DNSKEY_FLAG_REVOKE,
  DNSKEY_FLAG_SEP,
  DNSKEY_FLAG_ZONE,
  dsDigest,
  type DnskeyData,
  parseDnskey,
  parseDs,
  parseRrsig,
  type RrsigData,
  signedData,
  SUPPORTED_ALGORITHMS,
  SUPPORTED_DIGESTS,
  unsupportedKeyReason,
  verifySignature,
} from './verify.js';
import { budgetReason, hasType, MAX_NSEC3_HASHES, MAX_NSEC3_ITERATIONS, nsec3Proofs, optOutReason, readNsec3, type Nsec3 } from './nsec3.js';
import { EDE, type DnssecReason, type DnssecStatus, type RawQuery, type RawResponse, type RRsetValidation, type TrustAnchor, type ValidationResult } from './types.js';

/**
 * The most records an RRset may hold for the validator to look at it (sort, canonicalise, verify);
 * beyond it the RRset is `indeterminate`. A 64 KB TCP answer holds about 6,000 small records; no
 * RRset a spoof check rests on needs more than a few dozen.
 */
export const MAX_RRSET_RECORDS = 1000;
/** unbound's MAX_VALIDATE_RRSIGS: signatures tried per RRset (KeyTrap, CVE-2023-50387). */
export const MAX_SIGNATURES_PER_RRSET = 8;
/** Keys tried per signature when key tags collide. */
export const MAX_KEYS_PER_SIGNATURE = 4;
export { MAX_NSEC3_HASHES, MAX_NSEC3_ITERATIONS };
/** CNAMEs followed in one validation (BIND and our ZoneResolver use 16 too). */
export const MAX_VALIDATION_CNAMES = 16;
/** Queries one validator may send (all questions of a check together). */
export const MAX_VALIDATION_QUERIES = 200;
/**
 * Zone levels (labels below the deepest zone state already known) whose DS and DNSKEY are asked at
 * once when a walk starts; a deeper name's further levels are asked one after another as they are
 * reached. A domain's chain is 2 to 4 levels (the root's child, the registry's, the domain's).
 */
export const MAX_CHAIN_LEVELS_AT_ONCE = 8;
/** Questions one validator has in flight at once; the others wait their turn, first come first served. */
export const MAX_VALIDATION_QUERIES_IN_FLIGHT = 16;
/**
 * Signature verifications one validator may make (all questions of a check together). A secure
 * domain costs about 7 from the root (2 with a warm `DnssecCache`); a hostile zone (colliding key
 * tags × decoy signatures × CNAME chains) could otherwise ask for thousands. When it is spent the
 * validation is `indeterminate`, naming this cap.
 */
export const MAX_SIGNATURE_VERIFICATIONS = 256;
/** unbound `val-sig-skew-min` / `val-sig-skew-max`: the clock skew allowed, 10 % of the window within these bounds. */
export const SIGNATURE_SKEW_MIN_SECONDS = 3600;
export const SIGNATURE_SKEW_MAX_SECONDS = 86_400;

/** Options of a `Validator`. */
export interface ValidatorOptions {
  /** How to ask (DO and CD set): `createRawQuery(...)`, or a resolver's `dnssecQuery()`. */
  query: RawQuery;
  /** The trust anchors; the IANA root anchors (`ianaRootAnchors()`) for the real DNS. */
  anchors: readonly TrustAnchor[];
  /** The time, in seconds since the epoch (injectable for tests); `Date.now()/1000` otherwise. */
  now?: () => number;
  /** Zone states shared between validations (one `DnssecCache` for many checks); none unless given. */
  cache?: DnssecCache | undefined;
}

/** How long a zone's state (its keys, or why it is insecure or bogus) is kept, at most. */
export const DNSSEC_CACHE_SECONDS = 300;
/** Zone states a `DnssecCache` holds; the oldest goes first (validated answers: as many again). */
export const DNSSEC_CACHE_ENTRIES = 10_000;
/** How long a bogus answer is kept (unbound's `val-bogus-ttl`): a fixed zone is seen again soon. */
export const DNSSEC_BOGUS_CACHE_SECONDS = 60;

/** A validated answer as a `DnssecCache` keeps it. */
interface HeldValidation {
  result: ValidationResult;
  /** The smallest TTL of the records the answer rests on (RFC 2181 §5.2, RFC 2308 §5 for denials). */
  ttl: number;
  /** The earliest expiry (epoch seconds) of the signatures it relied on, the chain's included. */
  signaturesExpire: number | undefined;
}

/** The entry of `key` while its `expires` (seconds since the epoch) is ahead; an expired one is dropped. */
function unexpired<E extends { expires: number }>(entries: Map<string, E>, key: string): E | undefined {
  const entry = entries.get(key);
  if (entry === undefined || entry.expires > Date.now() / 1000) return entry;
  entries.delete(key);
  return undefined;
}

/**
 * Zone states (authenticated keys, or a proven insecure or bogus state) shared by the validations of
 * many checks, each for `DNSSEC_CACHE_SECONDS` at most and never past the first expiry of the
 * signatures it rests on; indeterminate states are not kept. Uses the real clock.
 */
export class DnssecCache {
  readonly #entries = new Map<string, { expires: number; state: Promise<ZoneState> }>();
  readonly #answers = new Map<string, { expires: number; held: Promise<HeldValidation> }>();
  readonly #anchorKeys = new Map<string, { expires: number; answer: Promise<RawResponse> }>();
  readonly #inFlight = new WeakMap<RawQuery, Map<string, Promise<RawResponse>>>();
  /**
   * `query` with its questions in flight shared between the checks that use this cache: a question
   * (name and type) asked while the same one is still on its way gets that answer, not a second
   * query; the entry goes when the answer comes, so the next asks anew (what is kept is the
   * validated state, above, not the raw answer). Wrap the resolver's own query, under any
   * check's deadline (`queryWithinDeadline`): one check's deadline must not end another's question.
   */
  share(query: RawQuery): RawQuery {
    let flights = this.#inFlight.get(query);
    if (!flights) this.#inFlight.set(query, (flights = new Map()));
    const held = flights;
    return (name, type) => {
      const key = `${name.toLowerCase()}|${type}`;
      const flying = held.get(key);
      if (flying) return flying;
      const sent = query(name, type).finally(() => held.delete(key));
      held.set(key, sent);
      return sent;
    };
  }
  /**
   * @internal A validated answer (as unbound keeps secure RRsets): until the earliest of its TTL,
   * its signatures' expiry and `DNSSEC_CACHE_SECONDS` (`DNSSEC_BOGUS_CACHE_SECONDS` when bogus);
   * indeterminate ones are not kept. A warm check then verifies and asks nothing again.
   */
  getAnswer(key: string): Promise<HeldValidation> | undefined {
    return unexpired(this.#answers, key)?.held;
  }
  /**
   * @internal A trust anchor's zone's DNSKEY answer, asked once per `DNSSEC_CACHE_SECONDS` (its
   * records' TTL when shorter, RFC 2181 §5.2; a failed question is not kept): whether the resolver
   * gives DNSSEC material at all, and the keys every walk starts from, authenticated by the anchor
   * each time it is read (RFC 4035 §5.2, its signatures' window against the validator's clock).
   */
  anchorKeys(zone: string, ask: () => Promise<RawResponse>): Promise<RawResponse> {
    const held = unexpired(this.#anchorKeys, zone);
    if (held) return held.answer;
    const now = Date.now() / 1000;
    const answer = ask();
    const entry = { expires: now + DNSSEC_CACHE_SECONDS, answer };
    this.#anchorKeys.set(zone, entry);
    void answer.then((settled) => {
      if (this.#anchorKeys.get(zone) !== entry) return;
      if (settled.kind === 'error') this.#anchorKeys.delete(zone);
      else entry.expires = Math.min(entry.expires, now + Math.min(Infinity, ...settled.message.answer.map((r) => r.ttl)));
    });
    return answer;
  }
  /** @internal */
  setAnswer(key: string, held: Promise<HeldValidation>): void {
    const now = Date.now() / 1000;
    this.#answers.set(key, { expires: now + DNSSEC_CACHE_SECONDS, held });
    void held.then(
      (settled) => {
        const entry = this.#answers.get(key);
        if (!entry || entry.held !== held) return;
        if (settled.result.status === 'indeterminate') {
          this.#answers.delete(key);
          return;
        }
        const bogusCap = settled.result.status === 'bogus' ? DNSSEC_BOGUS_CACHE_SECONDS : Infinity;
        entry.expires = Math.min(entry.expires, now + settled.ttl, now + bogusCap, settled.signaturesExpire ?? Infinity);
      },
      () => this.#answers.delete(key),
    );
    while (this.#answers.size > DNSSEC_CACHE_ENTRIES) this.#answers.delete(this.#answers.keys().next().value as string);
  }
  /** @internal */
  get(key: string): Promise<ZoneState> | undefined {
    return unexpired(this.#entries, key)?.state;
  }
  /** @internal */
  set(key: string, state: Promise<ZoneState>): void {
    const now = Date.now() / 1000;
    this.#entries.set(key, { expires: now + DNSSEC_CACHE_SECONDS, state });
    void state.then((settled) => {
      if (settled.status === 'indeterminate') this.#entries.delete(key);
      else if (settled.status === 'secure' && settled.chainExpires !== undefined) {
        const entry = this.#entries.get(key);
        if (entry) entry.expires = Math.min(entry.expires, settled.chainExpires);
      }
    });
    while (this.#entries.size > DNSSEC_CACHE_ENTRIES) this.#entries.delete(this.#entries.keys().next().value as string);
  }
  /** Zone states held. */
  get size(): number {
    return this.#entries.size;
  }
}

/** The state of the zone a name falls in, as the walk from the anchor found it. */
type ZoneState =
  | { status: 'secure'; zone: string; keys: DnskeyData[]; /** Earliest expiry (epoch seconds) of the signatures of the chain down to these keys. */ chainExpires?: number }
  | { status: 'insecure' | 'bogus' | 'indeterminate'; zone: string; reason: DnssecReason };

type Verdict = { status: DnssecStatus; reason: DnssecReason };

const SECURE: DnssecReason = { code: null, text: 'The signatures verify from the trust anchor down.' };

/** Fail-closed ordering: the weaker of two states (bogus < indeterminate < insecure < secure). */
const RANK: Record<DnssecStatus, number> = { bogus: 0, indeterminate: 1, insecure: 2, secure: 3 };

/** The weakest of several verdicts (RFC 4035 §5: a chain is as strong as its weakest link). */
export function weakest<T extends { status: DnssecStatus }>(items: readonly T[]): T | undefined {
  let worst: T | undefined;
  for (const item of items) if (!worst || RANK[item.status] < RANK[worst.status]) worst = item;
  return worst;
}

/** RFC 1982 serial arithmetic on 32-bit times: a − b as a signed 32-bit number. */
function serialDiff(a: number, b: number): number {
  return ((a - b) | 0);
}

interface Nsec {
  owner: string;
  next: string;
  bitmap: Buffer;
}

function readNsec(set: RawRRset): Nsec | undefined {
  const rdata = set.rdatas[0];
  if (!rdata) return undefined;
  try {
    const next = readName(rdata, 0);
    return { owner: set.name, next: next.name.toLowerCase(), bitmap: rdata.subarray(next.end) };
  } catch {
    return undefined;
  }
}

/** RFC 4034 §6.1 order, with the last NSEC wrapping round to the apex: does (owner, next) cover name? */
function nsecCovers(nsec: Nsec, name: string): boolean {
  const afterOwner = compareNames(nsec.owner, name) < 0;
  const beforeNext = compareNames(name, nsec.next) < 0;
  const wraps = compareNames(nsec.next, nsec.owner) <= 0;
  return wraps ? afterOwner || beforeNext : afterOwner && beforeNext;
}

/** The longest common ancestor of two names. */
function commonAncestor(a: string, b: string): string {
  const la = splitLabels(a).reverse();
  const lb = splitLabels(b).reverse();
  const common: string[] = [];
  for (let i = 0; i < Math.min(la.length, lb.length) && la[i]?.toLowerCase() === lb[i]?.toLowerCase(); i++) common.push(la[i] as string);
  return common.reverse().join('.');
}

/**
 * Validates answers for one check. Keeps what it learnt about zones (their keys, their cuts) for
 * the questions after, so the MX, SPF and DMARC lookups of a domain share one walk.
 */
export class Validator {
  private readonly query: RawQuery;
  private readonly anchors: readonly TrustAnchor[];
  private readonly now: () => number;
  private readonly zoneStates = new Map<string, Promise<ZoneState>>();
  private readonly cache: DnssecCache | undefined;
  /** Questions asked ahead of the walk (`prefetchChain`, `anchorHasMaterial`), by name and type, until it reads them. */
  private readonly pending = new Map<string, Promise<RawResponse>>();
  /** At most `MAX_VALIDATION_QUERIES_IN_FLIGHT` questions on their way at once. */
  private readonly limit: LimitFunction = pLimit(MAX_VALIDATION_QUERIES_IN_FLIGHT);
  private queries = 0;
  private verifications = 0;
  /** The earliest expiration (epoch seconds) of the signatures that verified. */
  private earliest: number | undefined;

  constructor(options: ValidatorOptions) {
    this.query = options.query;
    this.anchors = options.anchors;
    this.now = options.now ?? (() => Date.now() / 1000);
    this.cache = options.cache;
  }

  /** The earliest expiration (seconds since the epoch) of every signature that verified so far. */
  earliestExpiration(): number | undefined {
    return this.earliest;
  }

  /** The queries sent so far. */
  queriesSent(): number {
    return this.queries;
  }

  /** The signature verifications made so far (at most `MAX_SIGNATURE_VERIFICATIONS`). */
  verificationsMade(): number {
    return this.verifications;
  }

  /** The zone of the deepest trust anchor at or above `name`, or undefined when none covers it. */
  anchorZoneOf(name: string): string | undefined {
    return this.anchorFor(name)?.zone;
  }

  /** True when some trust anchor is at or above `name`. */
  covers(name: string): boolean {
    return this.anchorFor(name) !== undefined;
  }

  /**
   * Validates the answer to (name, type), following CNAMEs; never throws for a DNS condition. With
   * a `DnssecCache`, an answer validated before (and still held) comes back without a query or a
   * signature verification.
   */
  async validate(name: string, type: number): Promise<ValidationResult> {
    const qname = name.toLowerCase().replace(/\.$/, '');
    const cache = this.cache;
    if (!cache) return (await this.validateAnew(qname, type)).result;
    const key = `${this.anchorFor(qname)?.zone ?? '-'}|${qname}|${type}`;
    let held = cache.getAnswer(key);
    if (!held) {
      held = this.validateAnew(qname, type).then(({ result, ttl }) => ({ result, ttl, signaturesExpire: this.earliest }));
      cache.setAnswer(key, held);
    }
    const settled = await held;
    // The signatures it rests on count for signaturesExpire, whether verified now or before.
    if (settled.signaturesExpire !== undefined) this.noteExpiry(settled.signaturesExpire);
    return settled.result;
  }

  private async validateAnew(qname: string, type: number): Promise<{ result: ValidationResult; ttl: number }> {
    let ttl = Infinity;
    const links: RRsetValidation[] = [];
    const visited = new Set<string>();
    let owner = qname;
    const finish = (answer: ValidationResult['answer'], rrset: RawRRset | undefined): { result: ValidationResult; ttl: number } => {
      const worst = weakest(links) ?? { status: 'indeterminate' as const, reason: { code: EDE.DNSSEC_INDETERMINATE, text: 'Nothing was validated.' } };
      return { result: { name: qname, type: typeName(type), status: worst.status, reason: worst.reason, answer, rrset, links }, ttl };
    };
    for (let hop = 0; hop <= MAX_VALIDATION_CNAMES; hop++) {
      if (visited.has(owner)) {
        links.push({ name: owner, type: 'CNAME', status: 'bogus', reason: { code: EDE.DNSSEC_BOGUS, text: `The CNAME chain loops back to ${owner}.` } });
        return finish('error', undefined);
      }
      visited.add(owner);
      const response = await this.ask(owner, type);
      if (response.kind === 'error') {
        links.push({ name: owner, type: typeName(type), status: 'indeterminate', reason: response.reason });
        return finish('error', undefined);
      }
      const message = response.message;
      const answerSets = groupRRsets(message.answer);
      const data = answerSets.find((s) => s.name === owner && s.type === type);
      const cname = type !== TYPE.CNAME ? answerSets.find((s) => s.name === owner && s.type === TYPE.CNAME) : undefined;
      if (data) {
        ttl = Math.min(ttl, data.ttl);
        const verdict = await this.positive(data, message.answer, message.authority);
        links.push({ name: owner, type: typeName(type), ...verdict });
        return finish('records', data);
      }
      if (cname) {
        ttl = Math.min(ttl, cname.ttl);
        const verdict = await this.positive(cname, message.answer, message.authority);
        links.push({ name: owner, type: 'CNAME', ...verdict });
        // A bogus link makes the chain bogus whatever follows (RFC 4035 §5: the weakest link), and a
        // spent verification budget can verify nothing more: the links after it are not asked for.
        const target = cname.rdatas[0] ? readName(cname.rdatas[0], 0).name.toLowerCase() : '';
        if (verdict.status === 'bogus') return finish('error', undefined);
        if (this.verificationsSpent()) {
          if (verdict.status !== 'indeterminate') links.push({ name: target, type: typeName(type), status: 'indeterminate', reason: verificationBudgetReason() });
          return finish('error', undefined);
        }
        owner = target;
        continue; // RFC 1034 §5.3.3: asked again from the target, in its own zone
      }
      const kind = message.rcode === 3 ? 'nxdomain' : 'nodata';
      // RFC 2308 §5: a denial lives as long as the records proving it (SOA, NSEC/NSEC3 and their RRSIGs).
      for (const record of message.authority) ttl = Math.min(ttl, record.ttl);
      if (message.authority.length === 0) ttl = 0;
      const verdict = await this.negative(message, owner, type);
      links.push({ name: owner, type: typeName(type), ...verdict });
      return finish(kind, undefined);
    }
    links.push({ name: owner, type: 'CNAME', status: 'indeterminate', reason: { code: EDE.DNSSEC_INDETERMINATE, text: `More than ${MAX_VALIDATION_CNAMES} CNAMEs.` } });
    return finish('error', undefined);
  }

  private verificationsSpent(): boolean {
    return this.verifications >= MAX_SIGNATURE_VERIFICATIONS;
  }

  private anchorFor(name: string): TrustAnchor | undefined {
    let best: TrustAnchor | undefined;
    for (const anchor of this.anchors) {
      if (isSubdomain(name, anchor.zone) && (!best || labelCount(anchor.zone) > labelCount(best.zone))) best = anchor;
    }
    return best;
  }

  /**
   * Whether the trust anchor's `zone` answers its DNSKEY question with any DNSSEC material at all
   * (RFC 4035 §5.2 needs its keys to start): a resolver that strips it (or zone files) is asked
   * nothing more. A failed question says yes: the failure is the validation's to report. The answer
   * is kept for the walk, which reads it as the anchor's keys instead of asking again.
   */
  async anchorHasMaterial(zone: string): Promise<boolean> {
    const response = await this.askAhead(zone, TYPE.DNSKEY);
    if (response.kind === 'error') return true;
    const sets = groupRRsets([...response.message.answer, ...response.message.authority]);
    return sets.some((s) => s.type === TYPE.DNSKEY || s.type === TYPE.RRSIG || s.type === TYPE.NSEC || s.type === TYPE.NSEC3);
  }

  /** (name, type) asked now for the walk to read later (`ask`); the same promise when already on its way. */
  private askAhead(name: string, type: number): Promise<RawResponse> {
    const key = questionKey(name, type);
    let sent = this.pending.get(key);
    if (!sent) {
      sent = this.send(name, type);
      this.pending.set(key, sent);
    }
    return sent;
  }

  /**
   * One question (counted), within `MAX_VALIDATION_QUERIES_IN_FLIGHT`; a trust anchor's DNSKEY from
   * the shared cache when it holds it (`DnssecCache.anchorKeys`). A rejection (a `RawQuery` should
   * not reject) becomes the question's error, so a question asked ahead and never read cannot reject unheard.
   */
  private send(name: string, type: number): Promise<RawResponse> {
    const ask = (): Promise<RawResponse> => {
      this.queries++;
      return this.limit(() => this.query(name, type)).catch((error: unknown): RawResponse => ({ kind: 'error', detail: error instanceof Error ? error.message : String(error) }));
    };
    const cache = this.cache;
    if (!cache || type !== TYPE.DNSKEY || this.anchorFor(name)?.zone !== name) return ask();
    let mine = false;
    const held = cache.anchorKeys(name, () => ((mine = true), ask()));
    // Another check's failure (its deadline, its cancellation) is not this one's: asked anew.
    return mine ? held : held.then((response) => (response.kind === 'error' ? ask() : response));
  }

  /**
   * The questions the walk from the anchor down to `target` will ask, asked at once rather than one
   * after another (RFC 4035 §5.2: the DS of each label below the deepest zone state already known,
   * then the DNSKEY of each zone). `apex`: an RRSIG names `target` as its signer, which RFC 4035
   * §5.3.1 requires to be the zone apex, so its DNSKEY is asked too; otherwise only those of the
   * labels above it (the target may be a name inside its zone, or under an insecure cut). The answers
   * are only held: the walk (`cut`, `enterZone`) still decides level by level, top-down, with every
   * rule of RFC 4035 §5, and an answer it does not reach (under an insecure or bogus cut, or a label
   * that is no cut) is never read. At most `MAX_CHAIN_LEVELS_AT_ONCE` levels, and nothing when the
   * questions would pass `MAX_VALIDATION_QUERIES` (the walk then asks one at a time and meets the cap).
   */
  private prefetchChain(target: string, apex: boolean): void {
    const anchor = this.anchorFor(target);
    if (!anchor) return;
    const levels: string[] = [];
    for (let name = target; !this.stateKnown(name, anchor.zone); name = parentOf(name)) {
      levels.unshift(name);
      if (name === anchor.zone) break;
    }
    const questions: [string, number][] = [];
    for (const name of levels.slice(0, MAX_CHAIN_LEVELS_AT_ONCE)) {
      // RFC 4035 §5.2: the anchor's keys are authenticated by the anchor itself, not by a DS.
      if (name !== anchor.zone) questions.push([name, TYPE.DS]);
      if (name === anchor.zone || name !== target || apex) questions.push([name, TYPE.DNSKEY]);
    }
    const fresh = questions.filter(([name, type]) => !this.pending.has(questionKey(name, type)));
    if (this.queries + fresh.length > MAX_VALIDATION_QUERIES) return;
    for (const [name, type] of fresh) this.askAhead(name, type);
  }

  /** Whether the state of the zone at `name` is held already (this check's, or the shared cache's). */
  private stateKnown(name: string, anchorZone: string): boolean {
    return this.zoneStates.has(name) || this.cache?.get(`${anchorZone}|${name}`) !== undefined;
  }

  private async ask(name: string, type: number): Promise<{ kind: 'response'; message: RawMessage } | { kind: 'error'; reason: DnssecReason }> {
    const key = questionKey(name, type);
    let sent = this.pending.get(key);
    if (sent) this.pending.delete(key); // asked ahead (and counted then): read once
    else {
      if (this.queries >= MAX_VALIDATION_QUERIES) {
        return { kind: 'error', reason: { code: EDE.DNSSEC_INDETERMINATE, text: `The validation needed more than ${MAX_VALIDATION_QUERIES} queries.` } };
      }
      sent = this.send(name, type);
    }
    const response = await sent;
    if (response.kind === 'error') return { kind: 'error', reason: { code: EDE.NO_REACHABLE_AUTHORITY, text: `The ${typeName(type)} query for ${name || '.'} failed: ${response.detail}.` } };
    const { rcode } = response.message;
    if (rcode !== 0 && rcode !== 3) {
      return { kind: 'error', reason: { code: EDE.DNSSEC_INDETERMINATE, text: `The ${typeName(type)} query for ${name || '.'} got rcode ${rcode} even with CD set.` } };
    }
    return response;
  }

  /**
   * The state of the deepest zone at or above `name`, walking cut by cut from the anchor (memoised).
   * `ahead`: the walk starts here (not a step of another walk), so its questions are asked at once
   * (`prefetchChain`); `apex` when a signature names `name` as its signer.
   */
  private zoneState(name: string, ahead?: { apex: boolean }): Promise<ZoneState> {
    let state = this.zoneStates.get(name);
    if (!state) {
      const key = `${this.anchorFor(name)?.zone ?? '-'}|${name}`;
      state = this.cache?.get(key);
      if (!state) {
        if (ahead) this.prefetchChain(name, ahead.apex);
        state = this.computeZoneState(name);
        this.cache?.set(key, state);
      }
      // The chain's signatures count for signaturesExpire, whether verified now or before.
      state = state.then((settled) => {
        if (settled.status === 'secure' && settled.chainExpires !== undefined) this.noteExpiry(settled.chainExpires);
        return settled;
      });
      this.zoneStates.set(name, state);
    }
    return state;
  }

  private noteExpiry(expires: number): void {
    if (this.earliest === undefined || expires < this.earliest) this.earliest = expires;
  }

  private async computeZoneState(name: string): Promise<ZoneState> {
    const anchor = this.anchorFor(name);
    if (!anchor) return { status: 'indeterminate', zone: name, reason: { code: EDE.DNSSEC_INDETERMINATE, text: `No trust anchor covers ${name || '.'}.` } };
    if (name === anchor.zone) return this.anchorZone(anchor);
    const parent = await this.zoneState(parentOf(name));
    if (parent.status !== 'secure') return parent;
    return this.cut(parent, name);
  }

  /** RFC 1982: the absolute time (epoch seconds) of a 32-bit signature time, near now. */
  private absolute(serial: number): number {
    const now = Math.floor(this.now()) >>> 0;
    return now + serialDiff(serial, now);
  }

  /** RFC 4035 §5.2: is `name` a cut below `parent`, and if so, what is the child's state? */
  private async cut(parent: Extract<ZoneState, { status: 'secure' }>, name: string): Promise<ZoneState> {
    const response = await this.ask(name, TYPE.DS);
    if (response.kind === 'error') return { status: 'indeterminate', zone: name, reason: response.reason };
    const message = response.message;
    const ds = groupRRsets(message.answer).find((s) => s.name === name && s.type === TYPE.DS);
    if (ds) {
      const verdict = this.verifyRRset(ds, message.answer, parent);
      if (verdict.status !== 'secure') return { status: failedAs(verdict), zone: name, reason: verdict.reason };
      const chain = Math.min(parent.chainExpires ?? Infinity, verdict.signature ? this.absolute(verdict.signature.expiration) : Infinity);
      return this.enterZone(name, ds.rdatas, [], `the DS at ${parent.zone || '.'}`, chain);
    }
    if (groupRRsets(message.answer).some((s) => s.name === name && s.type === TYPE.CNAME)) return parent; // a CNAME is no cut
    // No DS: the parent must prove it (RFC 4035 §5.2; RFC 6840 §4.4; RFC 5155 §8.6).
    const proof = this.denialSets(message.authority, parent);
    if (proof.status !== 'secure') {
      if (proof.status === 'unsigned') {
        return { status: 'bogus', zone: name, reason: { code: EDE.NSEC_MISSING, text: `${parent.zone || '.'} is signed, but the answer that ${name} has no DS came without a signed NSEC or NSEC3.` } };
      }
      return { status: proof.indeterminate ? 'indeterminate' : 'bogus', zone: name, reason: proof.reason };
    }
    if (proof.nsec.length > 0) {
      const own = proof.nsec.find((n) => n.owner === name);
      if (own) {
        if (hasType(own.bitmap, TYPE.DS)) return { status: 'bogus', zone: name, reason: { code: EDE.DNSSEC_BOGUS, text: `The NSEC at ${name} lists a DS, but none was given.` } };
        if (hasType(own.bitmap, TYPE.SOA)) return { status: 'bogus', zone: name, reason: { code: EDE.DNSSEC_BOGUS, text: `The DS of ${name} was denied by the child's own NSEC, which cannot speak for the parent (RFC 4035 §5.2).` } };
        if (hasType(own.bitmap, TYPE.NS)) return { status: 'insecure', zone: name, reason: { code: null, text: `${parent.zone || '.'} proves (NSEC) that the delegation to ${name} has no DS: the zone is unsigned.` } };
        return parent; // a name of the parent zone, not a cut
      }
      if (proof.nsec.some((n) => nsecCovers(n, name))) return parent; // does not exist, or an empty non-terminal
      return { status: 'bogus', zone: name, reason: { code: EDE.NSEC_MISSING, text: `No NSEC proves that ${name} has no DS.` } };
    }
    const nsec3 = nsec3Proofs(proof.nsec3, parent.zone);
    if ('status' in nsec3) return { ...nsec3, zone: name };
    const match = nsec3.match(name);
    if (match === 'budget') return { status: 'indeterminate', zone: name, reason: budgetReason() };
    if (match) {
      if (hasType(match.bitmap, TYPE.DS)) return { status: 'bogus', zone: name, reason: { code: EDE.DNSSEC_BOGUS, text: `The NSEC3 of ${name} lists a DS, but none was given.` } };
      if (hasType(match.bitmap, TYPE.SOA)) return { status: 'bogus', zone: name, reason: { code: EDE.DNSSEC_BOGUS, text: `The DS of ${name} was denied by the child's own NSEC3 (RFC 5155 §8.6).` } };
      if (hasType(match.bitmap, TYPE.NS)) return { status: 'insecure', zone: name, reason: { code: null, text: `${parent.zone} proves (NSEC3) that the delegation to ${name} has no DS: the zone is unsigned.` } };
      return parent;
    }
    const encloser = nsec3.closestEncloser(name);
    if (encloser === 'budget') return { status: 'indeterminate', zone: name, reason: budgetReason() };
    if (!encloser) return { status: 'bogus', zone: name, reason: { code: EDE.NSEC_MISSING, text: `No NSEC3 closest-encloser proof for the DS of ${name}.` } };
    // RFC 5155 §8.6: an opt-out span over the next closer name: an unsigned delegation may be there.
    if (encloser.cover.optOut) return { status: 'insecure', zone: name, reason: { code: null, text: `${name} lies in an NSEC3 opt-out span of ${parent.zone}: unsigned delegations there are insecure (RFC 5155 §6).` } };
    return parent;
  }

  /** The anchor's own zone: its DNSKEY RRset authenticated by the anchor's DS or DNSKEY records. */
  private anchorZone(anchor: TrustAnchor): Promise<ZoneState> {
    return this.enterZone(anchor.zone, anchor.ds, anchor.dnskeys, 'the trust anchor');
  }

  /** RFC 4035 §5.2: authenticates `zone`'s DNSKEY RRset from DS RDATAs (or anchor keys). */
  private async enterZone(zone: string, dsRdatas: readonly Buffer[], anchorKeys: readonly Buffer[], source: string, chainExpires = Infinity): Promise<ZoneState> {
    const allDs = dsRdatas.map(parseDs).filter((d) => d !== undefined);
    let usable = allDs.filter((d) => SUPPORTED_ALGORITHMS.has(d.algorithm) && SUPPORTED_DIGESTS.has(d.digestType));
    if (anchorKeys.length === 0 && usable.length === 0) {
      // RFC 4035 §5.2, RFC 6840 §5.2: no DS we can use: the zone is treated as unsigned.
      const algorithmKnown = allDs.some((d) => SUPPORTED_ALGORITHMS.has(d.algorithm));
      return {
        status: 'insecure',
        zone,
        reason: algorithmKnown
          ? { code: EDE.UNSUPPORTED_DS_DIGEST, text: `Every DS of ${zone || '.'} uses a digest type this validator does not support (${[...new Set(allDs.map((d) => d.digestType))].join(', ')}): treated as unsigned (RFC 4035 §5.2).` }
          : { code: EDE.UNSUPPORTED_DNSKEY_ALGORITHM, text: `Every DS of ${zone || '.'} names an algorithm this validator does not support (${[...new Set(allDs.map((d) => ALGORITHM_NAMES[d.algorithm] ?? d.algorithm))].join(', ')}): treated as unsigned (RFC 4035 §5.2).` },
      };
    }
    // RFC 4509 §3: with a SHA-256 (or stronger) DS, SHA-1 DS are ignored.
    if (usable.some((d) => d.digestType !== 1)) usable = usable.filter((d) => d.digestType !== 1);
    const response = await this.ask(zone, TYPE.DNSKEY);
    if (response.kind === 'error') return { status: 'indeterminate', zone, reason: response.reason };
    const set = groupRRsets(response.message.answer).find((s) => s.name === zone && s.type === TYPE.DNSKEY);
    if (!set) return { status: 'bogus', zone, reason: { code: EDE.DNSKEY_MISSING, text: `${zone || '.'} has no DNSKEY records, but ${source} says it is signed.` } };
    const keys = set.rdatas.map(parseDnskey).filter((k): k is DnskeyData => k !== undefined && k.protocol === 3);
    const zoneKeys = keys.filter((k) => (k.flags & DNSKEY_FLAG_ZONE) !== 0 && (k.flags & DNSKEY_FLAG_REVOKE) === 0);
    const entry = zoneKeys.filter((k) =>
      anchorKeys.some((a) => a.equals(k.rdata)) ||
      usable.some((d) => d.keyTag === k.keyTag && d.algorithm === k.algorithm && dsDigest(zone, k, d.digestType)?.equals(d.digest) === true),
    );
    // RFC 4035 §5.2: keys this validator does not verify with (an RSA exponent over 2^32, a modulus
    // over 4096 bits) count as an unsupported algorithm: never tried; when they are all the DS names,
    // the zone is treated as unsigned.
    const supportedEntry = entry.filter((k) => unsupportedKeyReason(k) === undefined);
    if (entry.length > 0 && supportedEntry.length === 0) {
      const why = unsupportedKeyReason(entry[0] as DnskeyData) as string;
      return {
        status: 'insecure',
        zone,
        reason: { code: EDE.UNSUPPORTED_DNSKEY_ALGORITHM, text: `Every DNSKEY of ${zone || '.'} that ${source} names is one this validator does not support (key ${(entry[0] as DnskeyData).keyTag}: ${why}): treated as unsigned (RFC 4035 §5.2).` },
      };
    }
    if (entry.length === 0) {
      // The fix is at the parent (the registrar): the DS of the key-signing keys the zone now serves.
      const seps = zoneKeys.filter((k) => (k.flags & DNSKEY_FLAG_SEP) !== 0 && SUPPORTED_ALGORITHMS.has(k.algorithm));
      const records = (seps.length > 0 ? seps : zoneKeys).slice(0, 4).map((k) => `${zone || ''}. IN DS ${k.keyTag} ${k.algorithm} 2 ${dsDigest(zone, k, 2)?.toString('hex').toUpperCase()}`);
      // Each record on a line of its own, indented and with nothing after it: copied as it is (issue 42).
      const fix = anchorKeys.length === 0 && records.length > 0 ? ` Publish at the registrar the DS of the key the zone now serves:\n${records.map((r) => `  ${r}`).join('\n')}` : '';
      return { status: 'bogus', zone, reason: { code: EDE.DNSKEY_MISSING, text: `No DNSKEY of ${zone || '.'} matches ${source} (key tags ${usable.map((d) => d.keyTag).join(', ') || 'of the anchor'}).${fix}` } };
    }
    const verdict = this.verifyRRset(set, response.message.answer, { status: 'secure', zone, keys: supportedEntry });
    if (verdict.status !== 'secure') return { status: failedAs(verdict), zone, reason: { ...verdict.reason, text: `The DNSKEY set of ${zone || '.'}: ${verdict.reason.text}` } };
    const expires = Math.min(chainExpires, verdict.signature ? this.absolute(verdict.signature.expiration) : Infinity);
    const usableKeys = zoneKeys.filter((k) => unsupportedKeyReason(k) === undefined);
    return { status: 'secure', zone, keys: usableKeys, ...(Number.isFinite(expires) ? { chainExpires: expires } : {}) };
  }

  /**
   * RFC 4035 §5.3: one RRset against its RRSIGs in `section`, with the keys of `zone`. Any valid
   * signature wins; otherwise the reason of the most telling failure.
   */
  private verifyRRset(set: RawRRset, section: readonly RawRecord[], zone: Extract<ZoneState, { status: 'secure' }>): Verdict & { signature?: RrsigData } {
    const sigs = section
      .filter((r) => r.type === TYPE.RRSIG && r.name === set.name)
      .map((r) => parseRrsig(r.rdata))
      .filter((s): s is RrsigData => s !== undefined && s.typeCovered === set.type);
    const label = `${set.name || '.'} ${typeName(set.type)}`;
    if (set.rdatas.length > MAX_RRSET_RECORDS) {
      return { status: 'indeterminate', reason: { code: EDE.DNSSEC_INDETERMINATE, text: `${label} holds ${set.rdatas.length} records; the validator looks at RRsets of at most ${MAX_RRSET_RECORDS} (MAX_RRSET_RECORDS).` } };
    }
    if (sigs.length === 0) return { status: 'bogus', reason: { code: EDE.RRSIGS_MISSING, text: `${label} has no RRSIG, but ${zone.zone || '.'} is signed.` } };
    const failures: DnssecReason[] = [];
    const now = Math.floor(this.now()) >>> 0;
    const ownerLabels = labelCount(set.name) - (set.name.startsWith('*.') || set.name === '*' ? 1 : 0);
    for (const sig of sigs.slice(0, MAX_SIGNATURES_PER_RRSET)) {
      if (sig.signer !== zone.zone) {
        failures.push({ code: EDE.DNSKEY_MISSING, text: `The RRSIG over ${label} is signed by ${sig.signer || '.'}, not by its zone ${zone.zone || '.'} (RFC 4035 §5.3.1).` });
        continue;
      }
      if (sig.labels > ownerLabels) {
        failures.push({ code: EDE.DNSSEC_BOGUS, text: `The RRSIG over ${label} claims ${sig.labels} labels; the owner has ${ownerLabels}.` });
        continue;
      }
      if (!SUPPORTED_ALGORITHMS.has(sig.algorithm)) {
        failures.push({ code: EDE.UNSUPPORTED_DNSKEY_ALGORITHM, text: `The only RRSIG over ${label} uses algorithm ${sig.algorithm}, which is not supported.` });
        continue;
      }
      const keys = zone.keys.filter((k) => k.keyTag === sig.keyTag && k.algorithm === sig.algorithm).slice(0, MAX_KEYS_PER_SIGNATURE);
      if (keys.length === 0) {
        failures.push({ code: EDE.DNSKEY_MISSING, text: `The RRSIG over ${label} names key ${sig.keyTag}, which is not an authenticated key of ${zone.zone || '.'}.` });
        continue;
      }
      // RFC 4034 §3.1.5, RFC 4035 §5.3.1: the window in serial arithmetic, with unbound's skew.
      const skew = Math.min(SIGNATURE_SKEW_MAX_SECONDS, Math.max(SIGNATURE_SKEW_MIN_SECONDS, Math.floor(Math.abs(serialDiff(sig.expiration, sig.inception)) / 10)));
      if (serialDiff(now, sig.expiration) > skew) {
        failures.push({ code: EDE.SIGNATURE_EXPIRED, text: `The RRSIG over ${label} expired on ${isoDate(sig.expiration)}.` });
        continue;
      }
      if (serialDiff(sig.inception, now) > skew) {
        failures.push({ code: EDE.SIGNATURE_NOT_YET_VALID, text: `The RRSIG over ${label} is valid only from ${isoDate(sig.inception)}.` });
        continue;
      }
      const data = signedData(set, sig);
      for (const key of keys) {
        if (this.verificationsSpent()) return { status: 'indeterminate', reason: verificationBudgetReason() };
        this.verifications++;
        if (!verifySignature(key, sig, data)) continue;
        this.noteExpiry(this.absolute(sig.expiration));
        return { status: 'secure', reason: SECURE, signature: sig };
      }
      failures.push({ code: EDE.DNSSEC_BOGUS, text: `The RRSIG over ${label} does not verify (the data or the signature was changed).` });
    }
    const order = [EDE.DNSSEC_BOGUS, EDE.SIGNATURE_EXPIRED, EDE.SIGNATURE_NOT_YET_VALID, EDE.DNSKEY_MISSING, EDE.UNSUPPORTED_DNSKEY_ALGORITHM] as number[];
    failures.sort((a, b) => order.indexOf(a.code ?? 0) - order.indexOf(b.code ?? 0));
    return { status: 'bogus', reason: failures[0] as DnssecReason };
  }

  /** A positive RRset (or CNAME): its signer's zone, its signatures, and for a wildcard the proof. */
  private async positive(set: RawRRset, answer: readonly RawRecord[], authority: readonly RawRecord[]): Promise<Verdict> {
    const signers = [...new Set(answer.filter((r) => r.type === TYPE.RRSIG && r.name === set.name).map((r) => parseRrsig(r.rdata)).filter((s): s is RrsigData => s !== undefined && s.typeCovered === set.type).map((s) => s.signer))];
    const signer = signers.find((s) => isSubdomain(set.name, s));
    const state = await this.zoneState(signer ?? set.name, { apex: signer !== undefined });
    if (state.status !== 'secure') return { status: state.status, reason: state.reason };
    if (signer === undefined) return { status: 'bogus', reason: { code: EDE.RRSIGS_MISSING, text: `${set.name} ${typeName(set.type)} has no RRSIG, but ${state.zone || '.'} is signed.` } };
    if (state.zone !== signer) {
      return { status: 'bogus', reason: { code: EDE.DNSKEY_MISSING, text: `${set.name} ${typeName(set.type)} is signed by ${signer}, which is not a zone apex (its zone is ${state.zone || '.'}).` } };
    }
    const verdict = this.verifyRRset(set, answer, state);
    if (verdict.status !== 'secure' || !verdict.signature) return verdict;
    const ownerLabels = labelCount(set.name);
    if (verdict.signature.labels >= ownerLabels) return verdict;
    // RFC 4035 §5.3.4, RFC 5155 §8.8: a wildcard expansion needs the proof that the name does not exist.
    const encloser = lastLabels(set.name, verdict.signature.labels);
    const proof = this.denialSets(authority, state);
    if (proof.status === 'bogus') return { status: proof.indeterminate ? 'indeterminate' : 'bogus', reason: proof.reason };
    if (proof.status === 'secure') {
      if (proof.nsec.some((n) => nsecCovers(n, set.name))) return verdict;
      if (proof.nsec3.length > 0) {
        const context = nsec3Proofs(proof.nsec3, state.zone);
        if ('status' in context) return context;
        const next = lastLabels(set.name, verdict.signature.labels + 1);
        const cover = context.cover(next);
        if (cover === 'budget') return { status: 'indeterminate', reason: budgetReason() };
        if (cover) return cover.optOut ? { status: 'insecure', reason: optOutReason(next) } : verdict;
      }
    }
    return { status: 'bogus', reason: { code: EDE.NSEC_MISSING, text: `${set.name} was answered from the wildcard *.${encloser} without the proof that ${set.name} itself does not exist (RFC 4035 §5.3.4).` } };
  }

  /** The NSEC and NSEC3 RRsets of a section, each verified against `zone`. */
  private denialSets(section: readonly RawRecord[], zone: Extract<ZoneState, { status: 'secure' }>):
    | { status: 'secure'; nsec: Nsec[]; nsec3: Nsec3[] }
    | { status: 'unsigned' }
    | { status: 'bogus'; reason: DnssecReason; indeterminate?: boolean } {
    const sets = groupRRsets(section).filter((s) => s.type === TYPE.NSEC || s.type === TYPE.NSEC3);
    if (sets.length === 0) return { status: 'unsigned' };
    const nsec: Nsec[] = [];
    const nsec3: Nsec3[] = [];
    for (const set of sets.slice(0, MAX_SIGNATURES_PER_RRSET)) {
      if (!isSubdomain(set.name, zone.zone)) continue; // another zone's: ignored
      const verdict = this.verifyRRset(set, section, zone);
      if (verdict.status !== 'secure') return { status: 'bogus', reason: verdict.reason, ...(verdict.status === 'indeterminate' ? { indeterminate: true } : {}) };
      if (set.type === TYPE.NSEC) {
        const read = readNsec(set);
        if (read) nsec.push(read);
      } else {
        const read = readNsec3(set);
        // RFC 5155 §8.1–8.2: unknown hash algorithms and flags are ignored; the owner is one label under the zone.
        if (read && read.hashAlgorithm === 1 && read.zone === zone.zone) nsec3.push(read);
      }
    }
    if (nsec.length === 0 && nsec3.length === 0) return { status: 'unsigned' };
    return { status: 'secure', nsec, nsec3 };
  }

  /** A negative answer (NXDOMAIN or NODATA) for (qname, qtype): its SOA and proof (RFC 4035 §5.4, RFC 5155 §8). */
  private async negative(message: RawMessage, qname: string, qtype: number): Promise<Verdict> {
    // A referral (no SOA, the NS of a cut at or above qname): the delegation's own state decides.
    const authoritySets = groupRRsets(message.authority);
    const cut = authoritySets.find((s) => s.type === TYPE.NS && isSubdomain(qname, s.name));
    if (cut && !authoritySets.some((s) => s.type === TYPE.SOA)) {
      const delegated = await this.zoneState(cut.name, { apex: false });
      if (delegated.status !== 'secure') return { status: delegated.status, reason: delegated.reason };
      return { status: 'indeterminate', reason: { code: EDE.DNSSEC_INDETERMINATE, text: `The resolver answered with a referral to ${cut.name} instead of an answer.` } };
    }
    const sigs = message.authority.filter((r) => r.type === TYPE.RRSIG).map((r) => parseRrsig(r.rdata)).filter((s): s is RrsigData => s !== undefined);
    const signer = sigs.map((s) => s.signer).find((s) => isSubdomain(qname, s));
    const state = await this.zoneState(signer ?? qname, { apex: signer !== undefined });
    if (state.status !== 'secure') return { status: state.status, reason: state.reason };
    const what = message.rcode === 3 ? `that ${qname} does not exist` : `that ${qname} has no ${typeName(qtype)}`;
    if (signer === undefined) {
      return { status: 'bogus', reason: { code: EDE.NSEC_MISSING, text: `${state.zone || '.'} is signed, but the answer ${what} came without a signed proof.` } };
    }
    if (state.zone !== signer) return { status: 'bogus', reason: { code: EDE.DNSKEY_MISSING, text: `The denial for ${qname} is signed by ${signer}, which is not a zone apex.` } };
    const soa = groupRRsets(message.authority).find((s) => s.type === TYPE.SOA && s.name === state.zone);
    if (soa) {
      const verdict = this.verifyRRset(soa, message.authority, state);
      if (verdict.status !== 'secure') return verdict;
    }
    const proof = this.denialSets(message.authority, state);
    if (proof.status === 'bogus') return { status: proof.indeterminate ? 'indeterminate' : 'bogus', reason: proof.reason };
    const missing: Verdict = { status: 'bogus', reason: { code: EDE.NSEC_MISSING, text: `No NSEC or NSEC3 record proves ${what}.` } };
    if (proof.status === 'unsigned') return missing;
    const secure: Verdict = { status: 'secure', reason: { code: null, text: `Signed NSEC${proof.nsec.length ? '' : '3'} records prove ${what}.` } };
    if (proof.nsec.length > 0) return this.nsecDenial(proof.nsec, qname, qtype, message.rcode === 3) ? secure : missing;
    const context = nsec3Proofs(proof.nsec3, state.zone);
    if ('status' in context) return context;
    if (message.rcode !== 3) {
      const match = context.match(qname);
      if (match === 'budget') return { status: 'indeterminate', reason: budgetReason() };
      if (match) return !hasType(match.bitmap, qtype) && !hasType(match.bitmap, TYPE.CNAME) ? secure : missing; // RFC 5155 §8.5
    }
    const ce = context.closestEncloser(qname);
    if (ce === 'budget') return { status: 'indeterminate', reason: budgetReason() };
    if (!ce) return missing;
    if (message.rcode !== 3) {
      // RFC 5155 §8.6 (DS under opt-out) and §8.7 (wildcard NODATA).
      if (qtype === TYPE.DS && ce.cover.optOut) return { status: 'insecure', reason: optOutReason(ce.next) };
      const wild = context.match(`*.${ce.encloser}`);
      if (wild === 'budget') return { status: 'indeterminate', reason: budgetReason() };
      if (wild && !hasType(wild.bitmap, qtype) && !hasType(wild.bitmap, TYPE.CNAME)) return secure;
      return ce.cover.optOut ? { status: 'insecure', reason: optOutReason(ce.next) } : missing;
    }
    // RFC 5155 §8.4: name error = closest encloser proof + no wildcard at it; §9.2: opt-out ⇒ insecure.
    if (ce.cover.optOut) return { status: 'insecure', reason: optOutReason(ce.next) };
    const wildcard = context.cover(`*.${ce.encloser}`);
    if (wildcard === 'budget') return { status: 'indeterminate', reason: budgetReason() };
    return wildcard ? secure : missing;
  }

  /** RFC 4035 §5.4, RFC 6840 §4.1, §4.3: does this signed NSEC set prove the denial? */
  private nsecDenial(nsecs: readonly Nsec[], qname: string, qtype: number, nxdomain: boolean): boolean {
    const own = nsecs.find((n) => n.owner === qname);
    if (!nxdomain && own) {
      if (hasType(own.bitmap, qtype) || hasType(own.bitmap, TYPE.CNAME)) return false;
      // An NSEC from the parent side of a cut speaks only for the DS (RFC 6840 §4.1).
      if (qtype !== TYPE.DS && hasType(own.bitmap, TYPE.NS) && !hasType(own.bitmap, TYPE.SOA)) return false;
      return !hasType(own.bitmap, TYPE.DNAME);
    }
    const covering = nsecs.find((n) => nsecCovers(n, qname));
    if (!covering) return false;
    const nextIsBelow = isSubdomain(covering.next, qname) && covering.next !== qname;
    if (!nxdomain && nextIsBelow) return true; // an empty non-terminal (RFC 4035 §3.1.3.2)
    if (nxdomain && nextIsBelow) return false; // the name exists: a forged NXDOMAIN
    const a = commonAncestor(qname, covering.owner);
    const b = commonAncestor(qname, covering.next);
    const encloser = labelCount(a) >= labelCount(b) ? a : b;
    const wildcard = encloser === '' ? '*' : `*.${encloser}`;
    if (nxdomain) return nsecs.some((n) => nsecCovers(n, wildcard)); // RFC 4035 §5.4: no wildcard either
    // Wildcard NODATA (RFC 4035 §3.1.3.4): qname covered, the wildcard's own NSEC without the type.
    const wild = nsecs.find((n) => n.owner === wildcard);
    return wild !== undefined && !hasType(wild.bitmap, qtype) && !hasType(wild.bitmap, TYPE.CNAME);
  }
}

/** The key of a question (name and type) among those asked ahead. */
function questionKey(name: string, type: number): string {
  return `${name}|${type}`;
}

/** A failed check's state: `indeterminate` when the verification budget ran out, else `bogus`. */
function failedAs(verdict: Verdict): 'bogus' | 'indeterminate' {
  return verdict.status === 'indeterminate' ? 'indeterminate' : 'bogus';
}

function verificationBudgetReason(): DnssecReason {
  return { code: EDE.DNSSEC_INDETERMINATE, text: `The validation needed more than ${MAX_SIGNATURE_VERIFICATIONS} signature verifications (MAX_SIGNATURE_VERIFICATIONS), the most one check may make: a zone with colliding key tags or decoy signatures?` };
}

function isoDate(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 10);
}
