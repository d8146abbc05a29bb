/**
 * The RFC 1035 §5 master-file ("zone file") parser: text in, a `Zone` out, or a `ZoneSyntaxError`
 * that names the file, line and column. Only standard syntax is read, so that the files it accepts
 * load unchanged in NSD, BIND and Knot.
 *
 * What a file may hold (RFC 1035 §5.1, RFC 2308 §4):
 *
 *   $ORIGIN <domain-name>
 *   $TTL <ttl>
 *   $INCLUDE <file-name> [<domain-name>]
 *   <owner> [<ttl>] [<class>] <type> <rdata>      or  <owner> [<class>] [<ttl>] <type> <rdata>
 *   <blank> [<ttl>] [<class>] <type> <rdata>      (a line starting with white space: the previous owner)
 *
 *   owner, names in rdata   absolute ("mail.example.com."), relative to the origin ("mail"), or "@"
 *   ttl                     seconds ("3600") or units ("1h30m", "2d"; w d h m s, as BIND and Knot read)
 *   class                   IN, or nothing; other classes are refused
 *   ( … )                   one record over several lines; ";" starts a comment outside quotes
 *   "…"                     a character-string; \" \\ and \DDD (a decimal octet) are escapes
 *
 * Types read: SOA, NS, A, AAAA, MX, TXT, CNAME, PTR (the `RecordType` union, into `Zone.records`);
 * the other types a real zone export holds (CAA, SRV, TLSA, DS, DNSKEY, RRSIG, NSEC, NSEC3, SVCB,
 * HTTPS, DNAME…, see `./rdata.ts`) into `Zone.otherRecords` in wire form; any type, known or not
 * (`TYPE65280`), in the RFC 3597 §5 generic form `\# <length> <hex>`. An unknown mnemonic is refused.
 *
 * Refused although some servers take them: an escaped dot inside a label ("a\.b": names are kept in
 * dotted form, which cannot hold one), names outside printable ASCII (write IDNs as xn--), text
 * that is not UTF-8 once escapes are decoded, a CNAME beside other data. Exact duplicate records
 * are dropped, as servers do.
 *
 * Defaults when a record has no TTL (RFC 2308 §4 replaced the "last stated TTL" rule of RFC 1035
 * §5.1 with `$TTL`):
 *   1. the `$TTL` in effect;
 *   2. otherwise the SOA's MINIMUM field, for the SOA itself and every record after it (the meaning
 *      MINIMUM had before RFC 2308, and what BIND does);
 *   3. otherwise `options.defaultTtl`, or `DEFAULT_ZONE_TTL`.
 * Servers disagree on 2 and 3, so files meant for real servers should start with `$TTL`.
 *
 * The zone's origin (its apex) is `options.origin` when given; otherwise the origin in effect when
 * the first record is read (set by `$ORIGIN`); otherwise, when that first record is an SOA with an
 * absolute owner, the SOA's owner. Every record must lie at or below the apex.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { canonicalName, dnsNameProblem, isAtOrBelow, MAX_LABEL_OCTETS, MAX_NAME_OCTETS } from '../dns/name.js';
import type { RecordData, RecordType, SoaData } from '../dns/types.js';
import type { OtherRecord, ResourceRecord, Zone } from './types.js';
import { clip, isDigit, Lexer, shown, SPACE, utf8, ZoneSyntaxError, type Entry, type Token } from './lexer.js';
import { genericRdata, GENERIC_ONLY_RECORD_TYPES, OTHER_RECORD_TYPES, otherRdata, recordTypeCode, recordTypeName, type RdataContext } from './rdata.js';

export { ZoneSyntaxError };

/** How deep `$INCLUDE` may nest: a file included by a file included by … A loop is refused at any depth. */
export const MAX_INCLUDE_DEPTH = 8;
/** The TTL of a record with none, when there is neither `$TTL` nor an SOA before it: one hour. */
export const DEFAULT_ZONE_TTL = 3600;
/** RFC 2181 §8: a TTL is an unsigned 31-bit number of seconds. */
export const MAX_TTL = 2_147_483_647;
/** RFC 1035 §3.3.13, RFC 1982: the SOA serial and timers are unsigned 32-bit numbers. */
export const MAX_SOA_NUMBER = 4_294_967_295;
/** RFC 1035 §3.3.9: the MX preference is an unsigned 16-bit number. */
export const MAX_MX_PREFERENCE = 65_535;
/** RFC 1035 §3.3: a character-string is one length octet followed by at most 255 octets. */
export const MAX_CHARACTER_STRING_OCTETS = 255;
/** RFC 1035 §3.2.1: RDLENGTH is 16 bits, so the data of one record is at most 65535 octets. */
export const MAX_RDATA_OCTETS = 65_535;
/** The record types this parser reads, in the order the messages list them. */
export const SUPPORTED_RECORD_TYPES: readonly RecordType[] = ['SOA', 'NS', 'A', 'AAAA', 'MX', 'TXT', 'CNAME', 'PTR'];

/** The file name used in messages when the caller gives none. */
const UNNAMED_FILE = '<zone>';
/** RFC 4035 §2.5: the types that may stand beside a CNAME (its own signature and denial). */
const BESIDE_CNAME = new Set(['RRSIG', 'NSEC']);
/** RFC 1035 §3.2.4 classes, and the RFC 3597 generic form. */
const CLASS_PATTERN = /^(?:IN|CS|CH|HS|NONE|ANY|CLASS\d+)$/i;
/** RFC 2308 §4 (and BIND, Knot, NSD): TTL units. */
const TTL_UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

/** How to read one master file. Every field is optional. */
export interface ParseZoneOptions {
  /** The zone's apex and first origin, as a server's configuration gives it (trailing dot optional). */
  origin?: string;
  /** The file's name, for messages and as the base of relative `$INCLUDE` paths. */
  file?: string;
  /** The TTL of records with none when there is no `$TTL` and no SOA before them; `DEFAULT_ZONE_TTL` otherwise. */
  defaultTtl?: number;
  /** How deep `$INCLUDE` may nest; `MAX_INCLUDE_DEPTH` otherwise. */
  maxIncludeDepth?: number;
  /** Reads an included file (the path is relative to the including file). Without it `$INCLUDE` is refused. */
  readInclude?: (path: string) => string;
  /**
   * Refuse a zone without exactly one SOA and at least one NS record at its apex, as BIND, NSD and
   * Knot do (RFC 1035 §5.2, RFC 1034 §4.2.1). Off by default, so that fragments parse.
   */
  requireSoaAndNs?: boolean;
}

/**
 * Parses the text of one master file (and the files it `$INCLUDE`s) into a `Zone`.
 * Throws `ZoneSyntaxError` at the first problem; never returns a partial zone.
 */
export function parseZone(text: string, options: ParseZoneOptions = {}): Zone {
  return new ZoneParser(options).parse(text);
}

/**
 * Parses a TTL as a zone file writes it: plain seconds (`3600`) or units (`1h30m`, `2d`, `1w`),
 * case-insensitive. Undefined when the text is not a TTL or exceeds `max`.
 */
export function parseTtl(text: string, max: number = MAX_TTL): number | undefined {
  let total = 0;
  let value = 0;
  let digits = 0;
  let sawUnit = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 48 && code <= 57) {
      value = value * 10 + (code - 48);
      digits++;
      if (value > max) return undefined;
      continue;
    }
    const unit = TTL_UNIT_SECONDS[text[i]!.toLowerCase()];
    if (unit === undefined || digits === 0) return undefined;
    total += value * unit;
    if (total > max) return undefined;
    value = 0;
    digits = 0;
    sawUnit = true;
  }
  // A bare number after units ("1h30") is refused: write "1h30m" or "1h30s", whichever is meant.
  if (digits > 0 && sawUnit) return undefined;
  if (digits === 0 && !sawUnit) return undefined;
  return sawUnit ? total : value;
}

// ---------------------------------------------------------------------------------------------
// Parser

type TypedData = { [T in RecordType]: { type: T; data: RecordData<T> } }[RecordType];
/** A type read: one the checks read, or another one (its mnemonic or TYPEnnn, and its code). */
type ReadType = { checked: RecordType } | { other: string; code: number };

/** Per-file state: `$ORIGIN` and the previous owner revert when an included file ends (as in BIND). */
interface FileState {
  file: string;
  lexer: Lexer;
  origin: string | undefined;
  previousOwner: string | undefined;
  depth: number;
}

class ZoneParser {
  private apex: string | undefined;
  /** The `$TTL` in effect: one zone-wide default, so a `$TTL` in an included file stays in effect after it. */
  private ttlDirective: number | undefined;
  private soa: { data: SoaData; where: string } | undefined;
  private readonly records: ResourceRecord[] = [];
  private readonly otherRecords: OtherRecord[] = [];
  /**
   * name → the keys (`dataKey`) of the data read so far, by type: to drop duplicates and keep CNAMEs
   * alone. A set, so that a name with tens of thousands of records still loads in linear time.
   */
  private readonly nodes = new Map<string, Map<string, Set<string>>>();
  /** Absolute paths of the files being read, outermost first, to refuse `$INCLUDE` loops. */
  private readonly includeChain: string[] = [];
  private readonly maxIncludeDepth: number;
  private readonly fallbackTtl: number;

  constructor(private readonly options: ParseZoneOptions) {
    this.maxIncludeDepth = options.maxIncludeDepth ?? MAX_INCLUDE_DEPTH;
    this.fallbackTtl = options.defaultTtl ?? DEFAULT_ZONE_TTL;
    if (!Number.isInteger(this.fallbackTtl) || this.fallbackTtl < 0 || this.fallbackTtl > MAX_TTL) {
      throw new RangeError(`defaultTtl must be an integer from 0 to ${MAX_TTL}, got ${this.fallbackTtl}`);
    }
    if (options.origin !== undefined) {
      const problem = dnsNameProblem(options.origin);
      if (problem) throw new RangeError(`the origin option "${options.origin}" is not a valid name: ${problem}`);
      this.apex = canonicalName(options.origin);
    }
  }

  parse(text: string): Zone {
    const file = this.options.file ?? UNNAMED_FILE;
    this.includeChain.push(resolve(this.options.file ?? UNNAMED_FILE));
    const main: FileState = { file, lexer: new Lexer(text, file), origin: this.apex, previousOwner: undefined, depth: 0 };
    this.readFile(main);
    const end = main.lexer.end();
    const fail = (reason: string): never => {
      throw new ZoneSyntaxError(file, end.line, end.column, reason);
    };
    const apex = this.apex ?? main.origin;
    if (apex === undefined) {
      fail('expected "$ORIGIN <name>." or records with absolute names, found the end of the file with neither');
    }
    const origin = apex as string;
    if (this.options.requireSoaAndNs) {
      const where = origin === '' ? '.' : origin;
      // RFC 1035 §5.2: exactly one SOA at the top of the zone.
      if (!this.soa) fail(`expected an SOA record at the apex "${where}" (RFC 1035 §5.2), found the end of the file without one`);
      // RFC 1034 §4.2.1: the apex lists the zone's name servers; BIND refuses a zone without them.
      if (!this.nodes.get(origin)?.has('NS')) {
        fail(`expected an NS record at the apex "${where}" (RFC 1034 §4.2.1), found the end of the file without one`);
      }
    }
    const zone: Zone = { origin, records: this.records };
    if (this.otherRecords.length > 0) zone.otherRecords = this.otherRecords;
    if (this.options.file !== undefined) zone.source = this.options.file;
    return zone;
  }

  private readFile(state: FileState): void {
    for (let entry = state.lexer.next(); entry; entry = state.lexer.next()) {
      const first = entry.tokens[0]!;
      if (!entry.blankOwner && !first.quoted && first.raw.startsWith('$')) this.directive(state, entry);
      else this.record(state, entry);
    }
  }

  // RFC 1035 §5.1 ($ORIGIN, $INCLUDE), RFC 2308 §4 ($TTL)
  private directive(state: FileState, entry: Entry): void {
    const [keyword, argument] = entry.tokens as [Token, Token | undefined];
    const name = keyword.raw.toUpperCase();
    if (name === '$ORIGIN') {
      if (!argument) this.failAtEnd(state, entry, 'expected a domain name after $ORIGIN, found the end of the line');
      state.origin = this.name(state, argument, state.origin);
      this.expectEnd(state, entry, 2);
    } else if (name === '$TTL') {
      if (!argument) this.failAtEnd(state, entry, 'expected a TTL after $TTL, found the end of the line');
      this.ttlDirective = this.ttl(state, argument);
      this.expectEnd(state, entry, 2);
    } else if (name === '$INCLUDE') {
      this.include(state, entry, keyword, argument);
    } else if (name === '$GENERATE') {
      this.fail(state, keyword, 'expected $ORIGIN, $TTL or $INCLUDE, found "$GENERATE", which only BIND reads: write the records out');
    } else {
      this.fail(state, keyword, `expected a directive ($ORIGIN, $TTL or $INCLUDE), found ${shown(keyword)}`);
    }
  }

  private include(state: FileState, entry: Entry, keyword: Token, pathToken: Token | undefined): void {
    if (!pathToken) this.failAtEnd(state, entry, 'expected a file name after $INCLUDE, found the end of the line');
    const readInclude = this.options.readInclude;
    if (!readInclude) {
      this.fail(state, keyword, 'expected a way to read the file named by $INCLUDE (use loadZoneFile, or pass readInclude to parseZone), found none');
    }
    // RFC 1035 §5.1: the optional name is the origin of the included file only.
    const originToken = entry.tokens[2];
    const origin = originToken ? this.name(state, originToken, state.origin) : state.origin;
    this.expectEnd(state, entry, originToken ? 3 : 2);
    if (state.depth >= this.maxIncludeDepth) {
      this.fail(state, keyword, `expected $INCLUDE to nest at most ${this.maxIncludeDepth} deep, found one more level`);
    }
    const relative = pathToken.value;
    // Relative to the including file, so a directory of zones can move as a whole. Servers differ
    // (BIND resolves against its working directory): run them from the zone directory.
    const path = isAbsolute(relative) ? relative : join(dirname(state.file), relative);
    const key = resolve(path);
    if (this.includeChain.includes(key)) {
      this.fail(state, pathToken, `expected $INCLUDE to name a file not already being read, found a loop: "${path}" includes itself through this line`);
    }
    let text: string;
    try {
      text = readInclude(path);
    } catch (error) {
      this.fail(state, pathToken, `expected a readable file, found that "${path}" cannot be read: ${(error as Error).message}`);
    }
    this.includeChain.push(key);
    const included: FileState = { file: path, lexer: new Lexer(text, path), origin, previousOwner: undefined, depth: state.depth + 1 };
    this.readFile(included);
    this.includeChain.pop();
  }

  private record(state: FileState, entry: Entry): void {
    const tokens = entry.tokens;
    let index = 0;
    let owner: string;
    let ownerToken: Token | undefined;
    if (entry.blankOwner) {
      if (state.previousOwner === undefined) {
        this.fail(state, tokens[0]!, 'expected an owner name: this line starts with white space, which repeats the previous owner, but there is none in this file yet');
      }
      owner = state.previousOwner;
    } else {
      ownerToken = tokens[0]!;
      owner = this.name(state, ownerToken, state.origin);
      index = 1;
    }

    // RFC 1035 §5.1: [<TTL>] [<class>] or [<class>] [<TTL>], both optional, before the type.
    let ttl: number | undefined;
    let sawClass = false;
    for (;;) {
      const token = tokens[index];
      if (!token || token.quoted) break;
      if (CLASS_PATTERN.test(token.raw)) {
        if (sawClass) this.fail(state, token, `expected a record type, found a second class ${shown(token)}`);
        const upper = token.raw.toUpperCase();
        if (upper !== 'IN' && upper !== 'CLASS1') {
          this.fail(state, token, `expected the class IN (or no class), found ${shown(token)}: only Internet records can be loaded`);
        }
        sawClass = true;
      } else if (isDigit(token.raw.charCodeAt(0))) {
        if (ttl !== undefined) this.fail(state, token, `expected a record type, found a second TTL ${shown(token)}`);
        ttl = this.ttl(state, token);
      } else {
        break;
      }
      index++;
    }

    const typeToken = tokens[index];
    if (!typeToken) this.failAtEnd(state, entry, 'expected a record type (A, AAAA, MX, TXT, …), found the end of the record');
    const readType = this.type(state, typeToken);
    index++;
    const type = 'checked' in readType ? readType.checked : undefined;

    if (this.apex === undefined) {
      if (state.origin !== undefined) this.apex = state.origin;
      else if (type === 'SOA' && ownerToken) this.apex = state.origin = owner;
      else this.fail(state, ownerToken ?? typeToken, 'expected "$ORIGIN <name>." before the first record (or an SOA record first), found a record with no zone origin');
    }
    const apex = this.apex as string;
    if (!isAtOrBelow(owner, apex)) {
      this.fail(state, ownerToken ?? typeToken, `expected a name at or below the zone origin "${apex || '.'}", found "${owner || '.'}"`);
    }

    if ('other' in readType) {
      const rdata = this.otherRdata(state, entry, readType.other, index);
      const other: OtherRecord = { name: owner, type: readType.other, code: readType.code, ttl: ttl ?? this.defaultTtl(undefined), rdata };
      this.addOther(state, other, ownerToken ?? typeToken);
      state.previousOwner = owner;
      return;
    }
    const typed = entry.tokens[index]?.raw === '\\#' && !entry.tokens[index]!.quoted
      ? this.genericChecked(state, entry, type!, index)
      : this.rdata(state, entry, type!, index);
    const record = { name: owner, type: typed.type, ttl: ttl ?? this.defaultTtl(typed), data: typed.data } as ResourceRecord;
    this.add(state, record, ownerToken ?? typeToken);
    state.previousOwner = owner;
  }

  /** The TTL of a record without one; see the rule at the top of this file. */
  private defaultTtl(typed: TypedData | undefined): number {
    if (this.ttlDirective !== undefined) return this.ttlDirective; // RFC 2308 §4
    if (typed?.type === 'SOA') return typed.data.minimum;
    return this.soa?.data.minimum ?? this.fallbackTtl;
  }

  private add(state: FileState, record: ResourceRecord, at: Token): void {
    const where = record.name || '.';
    if (record.type === 'SOA') {
      // RFC 1035 §5.2: exactly one SOA, at the top of the zone.
      if (record.name !== this.apex) this.fail(state, at, `expected the SOA record at the zone origin "${this.apex || '.'}", found it at "${where}"`);
      if (this.soa) this.fail(state, at, `expected one SOA record, found a second (the first is at ${this.soa.where})`);
      this.soa = { data: record.data as SoaData, where: `${state.file}:${at.line}` };
    }
    if (this.addToNode(state, record.name, record.type, dataKey(record.data), at)) this.records.push(record);
  }

  private addOther(state: FileState, record: OtherRecord, at: Token): void {
    if (this.addToNode(state, record.name, record.type, Buffer.from(record.rdata).toString('hex'), at)) this.otherRecords.push(record);
  }

  /** Notes one record at its name; false for an exact duplicate (dropped). Refuses a CNAME beside other data. */
  private addToNode(state: FileState, name: string, type: string, key: string, at: Token): boolean {
    const where = name || '.';
    let node = this.nodes.get(name);
    if (!node) {
      node = new Map();
      this.nodes.set(name, node);
    }
    const rrset = node.get(type);
    // RFC 2181 §5: an RRset holds no duplicate records; servers drop exact repeats, and so do we.
    if (rrset?.has(key)) return false;
    // RFC 2181 §10.1, RFC 1034 §3.6.2: a name with a CNAME has no other data, and only one CNAME;
    // RFC 4035 §2.5: its RRSIG and NSEC may stand beside it. RFC 6672 §2.4: one DNAME per name.
    if ((type === 'CNAME' || type === 'DNAME') && rrset) this.fail(state, at, `expected one ${type} record at "${where}", found a second`);
    const others = [...node.keys()].filter((t) => t !== 'CNAME' && !BESIDE_CNAME.has(t));
    if ((type === 'CNAME' && others.length > 0) || (node.has('CNAME') && type !== 'CNAME' && !BESIDE_CNAME.has(type))) {
      this.fail(state, at, `expected either a CNAME or other records at "${where}", found both (RFC 2181 §10.1)`);
    }
    if (rrset) rrset.add(key);
    else node.set(type, new Set([key]));
    return true;
  }

  /** The RDATA of a type outside `RecordType`: its presentation form, or RFC 3597 `\#` for any type. */
  private otherRdata(state: FileState, entry: Entry, type: string, start: number): Uint8Array {
    const fields = entry.tokens.slice(start);
    if (fields.length === 0) this.failAtEnd(state, entry, `expected the data of this ${type} record, found the end of the record`);
    const ctx = this.rdataContext(state, entry);
    if (fields[0]!.raw === '\\#' && !fields[0]!.quoted) return genericRdata(fields, ctx); // RFC 3597 §5
    if (OTHER_RECORD_TYPES[type] === undefined) {
      this.fail(state, fields[0]!, `expected the RFC 3597 generic form "\\# <length> <hex>" for a ${type} record (this parser has no reader for its usual form), found ${shown(fields[0]!)}`);
    }
    return otherRdata(type, fields, ctx);
  }

  private rdataContext(state: FileState, entry: Entry): RdataContext {
    return {
      name: (field, what) => this.name(state, field as Token, state.origin, what),
      fail: (field, reason) => (field ? this.fail(state, field as Token, reason) : this.failAtEnd(state, entry, reason)),
    };
  }

  /** RFC 3597 §5: a type the checks read, written `\# <length> <hex>`: decoded as its wire form says. */
  private genericChecked(state: FileState, entry: Entry, type: RecordType, start: number): TypedData {
    const fields = entry.tokens.slice(start);
    const octets = genericRdata(fields, this.rdataContext(state, entry));
    const data = decodeCheckedRdata(type, octets);
    if (data === undefined) this.fail(state, fields[0]!, `expected ${octets.length === 0 ? 'data' : 'octets'} that are a valid ${type} record in wire form (RFC 3597 §5), found ${octets.length} octets that are not`);
    return { type, data } as TypedData;
  }

  private type(state: FileState, token: Token): ReadType {
    const upper = token.quoted ? '' : token.raw.toUpperCase();
    if ((SUPPORTED_RECORD_TYPES as readonly string[]).includes(upper)) return { checked: upper as RecordType };
    if (upper === 'SPF' || upper === 'TYPE99') {
      this.fail(state, token, `expected a supported record type, found SPF (type 99), which RFC 7208 §3.1 retired: publish the policy as TXT`);
    }
    const code = recordTypeCode(upper);
    if (code === undefined) {
      if (/^TYPE\d+$/.test(upper)) this.fail(state, token, `expected a type code from 0 to 65535 (RFC 3597 §5), found ${shown(token)}`);
      this.fail(state, token, `expected a record type (A, AAAA, MX, TXT, …), found ${shown(token)}`);
    }
    // RFC 3597 §5: TYPEnnn names a known type by its code too (TYPE1 is A).
    const name = recordTypeName(code);
    if ((SUPPORTED_RECORD_TYPES as readonly string[]).includes(name)) return { checked: name as RecordType };
    // RFC 6895 §3.1: meta-types and QTYPEs (OPT, TKEY, TSIG, IXFR, AXFR, ANY…) are never zone data.
    if (code === 0 || code === 41 || (code >= 128 && code <= 255)) {
      this.fail(state, token, `expected a record type that can be zone data, found ${upper} (a meta-type or query type, RFC 6895 §3.1)`);
    }
    return { other: OTHER_RECORD_TYPES[name] !== undefined || GENERIC_ONLY_RECORD_TYPES[name] !== undefined ? name : `TYPE${code}`, code };
  }

  private rdata(state: FileState, entry: Entry, type: RecordType, start: number): TypedData {
    let index = start;
    const take = (what: string): Token => {
      const token = entry.tokens[index++];
      if (!token) this.failAtEnd(state, entry, `expected ${what}, found the end of the record`);
      return token;
    };
    const takeName = (what: string): string => this.name(state, take(what), state.origin, what);
    let typed: TypedData;
    switch (type) {
      case 'A': {
        const token = take('an IPv4 address');
        // RFC 1035 §3.4.1: four decimal octets.
        if (token.quoted || !isIPv4(token.value)) this.fail(state, token, `expected an IPv4 address (like 192.0.2.1), found ${shown(token)}`);
        typed = { type, data: token.value };
        break;
      }
      case 'AAAA': {
        const token = take('an IPv6 address');
        // RFC 3596 §2.4 (the text form of RFC 4291 §2.2); a zone index ("%eth0") has no place in DNS.
        if (token.quoted || !isIPv6(token.value) || token.value.includes('%')) {
          this.fail(state, token, `expected an IPv6 address (like 2001:db8::1), found ${shown(token)}`);
        }
        typed = { type, data: canonicalIpv6(token.value) };
        break;
      }
      case 'NS':
      case 'CNAME':
      case 'PTR':
        typed = { type, data: takeName('a domain name') };
        break;
      case 'MX': {
        // RFC 1035 §3.3.9: PREFERENCE EXCHANGE; RFC 7505: "0 ." is a null MX.
        const preference = this.number(state, take('an MX preference (0 to 65535)'), 'an MX preference', MAX_MX_PREFERENCE);
        typed = { type, data: { preference, exchange: takeName('a mail exchange name') } };
        break;
      }
      case 'TXT':
        typed = { type, data: this.characterStrings(state, entry, index) };
        index = entry.tokens.length;
        break;
      case 'SOA': {
        // RFC 1035 §3.3.13: MNAME RNAME SERIAL REFRESH RETRY EXPIRE MINIMUM
        const mname = takeName('the primary name server (SOA MNAME)');
        const rname = takeName('the mailbox of the person responsible (SOA RNAME)');
        const serial = this.number(state, take('the SOA serial'), 'an SOA serial', MAX_SOA_NUMBER);
        const [refresh, retry, expire, minimum] = (['REFRESH', 'RETRY', 'EXPIRE', 'MINIMUM'] as const).map((field) => {
          const token = take(`the SOA ${field}`);
          const value = token.quoted ? undefined : parseTtl(token.value, MAX_SOA_NUMBER);
          if (value === undefined) this.fail(state, token, `expected the SOA ${field} (seconds, or units like 1h), found ${shown(token)}`);
          return value;
        }) as [number, number, number, number];
        typed = { type, data: { mname, rname, serial, refresh, retry, expire, minimum } };
        break;
      }
    }
    this.expectEnd(state, entry, index);
    return typed;
  }

  /** RFC 1035 §3.3.14: TXT-DATA is one or more character-strings, each kept as published. */
  private characterStrings(state: FileState, entry: Entry, start: number): string[] {
    if (start >= entry.tokens.length) this.failAtEnd(state, entry, 'expected one or more character-strings ("…"), found the end of the record');
    const strings: string[] = [];
    let rdataOctets = 0;
    for (let index = start; index < entry.tokens.length; index++) {
      const token = entry.tokens[index]!;
      // RFC 1035 §3.3: a character-string is a length octet and at most 255 octets.
      if (token.octets > MAX_CHARACTER_STRING_OCTETS) {
        this.fail(state, token, `expected a character-string of at most ${MAX_CHARACTER_STRING_OCTETS} octets (RFC 1035 §3.3), found one of ${token.octets}: split it into several quoted strings, "…" "…", which SPF and DKIM join`);
      }
      rdataOctets += 1 + token.octets;
      if (rdataOctets > MAX_RDATA_OCTETS) {
        this.fail(state, token, `expected at most ${MAX_RDATA_OCTETS} octets of data in one record (RFC 1035 §3.2.1), found more`);
      }
      strings.push(token.value);
    }
    return strings;
  }

  /**
   * A domain name field: "@" is the origin, a name ending in "." is absolute, any other is relative
   * to the origin (RFC 1035 §5.1). Returned canonical: lower case, no trailing dot, the root ''.
   */
  private name(state: FileState, token: Token, origin: string | undefined, what = 'a domain name'): string {
    if (token.quoted) this.fail(state, token, `expected ${what}, found ${shown(token)}`);
    if (token.raw === '@') {
      if (origin === undefined) this.fail(state, token, `expected an origin for "@": add "$ORIGIN <name>." above this line, found none`);
      return origin;
    }
    // A dot inside a label (RFC 1035 §5.1 "\.") has no place in the dotted form names are kept in.
    if (token.escapedDot) this.fail(state, token, `expected ${what} without an escaped dot ("\\."): a dot inside a label cannot be represented, found ${shown(token)}`);
    const value = token.value;
    if (value === '.') return ''; // the root
    // One pass: printable ASCII, and the label sizes of RFC 1035 §2.3.4 (a hint; the message comes from dnsNameProblem).
    let labelOctets = 0;
    let sizeProblem = false;
    for (let i = 0; i < value.length; i++) {
      const code = value.charCodeAt(i);
      if (code <= SPACE || code >= 127) {
        this.fail(state, token, `expected ${what} in printable ASCII (write internationalized names in their xn-- form), found ${shown(token)}`);
      }
      if (code === 46) {
        if (labelOctets === 0 || labelOctets > MAX_LABEL_OCTETS) sizeProblem = true;
        labelOctets = 0;
      } else labelOctets++;
    }
    if (labelOctets > MAX_LABEL_OCTETS) sizeProblem = true;
    let absolute: string;
    if (value.endsWith('.')) absolute = value.slice(0, -1);
    else if (origin === undefined) {
      this.fail(state, token, `expected an absolute name (ending in ".") or "$ORIGIN <name>." above this line, found the relative name ${shown(token)}`);
    } else absolute = origin === '' ? value : `${value}.${origin}`;
    const canonical = absolute.toLowerCase();
    if (sizeProblem || canonical.length > MAX_NAME_OCTETS) {
      // dnsNameProblem forgives one trailing dot; here a second one is an empty label.
      const problem = canonical.endsWith('.')
        ? `the name "${clip(canonical)}" has an empty label (two dots in a row, or a leading dot)`
        : dnsNameProblem(canonical);
      this.fail(state, token, `expected ${what} (labels of 1 to 63 octets, 253 in all), found ${shown(token)}: ${problem}`);
    }
    return canonical;
  }

  private ttl(state: FileState, token: Token): number {
    const value = token.quoted ? undefined : parseTtl(token.value);
    if (value === undefined) {
      this.fail(state, token, `expected a TTL (seconds up to ${MAX_TTL}, or units like 1h30m, 2d), found ${shown(token)}`);
    }
    return value;
  }

  /** A plain decimal number from 0 to `max`. */
  private number(state: FileState, token: Token, what: string, max: number): number {
    const text = token.value;
    if (!token.quoted && /^\d{1,10}$/.test(text)) {
      const value = Number(text);
      if (value <= max) return value;
    }
    this.fail(state, token, `expected ${what} (a number from 0 to ${max}), found ${shown(token)}`);
  }

  private expectEnd(state: FileState, entry: Entry, index: number): void {
    const extra = entry.tokens[index];
    if (extra) this.fail(state, extra, `expected the end of the record, found ${shown(extra)}`);
  }

  private fail(state: FileState, token: Token, reason: string): never {
    throw new ZoneSyntaxError(state.file, token.line, token.column, reason);
  }

  /** Fails just after the last token of the entry, where the missing field was expected. */
  private failAtEnd(state: FileState, entry: Entry, reason: string): never {
    const last = entry.tokens[entry.tokens.length - 1]!;
    throw new ZoneSyntaxError(state.file, last.line, last.column + last.raw.length, reason);
  }
}

/**
 * A string equal for two records of one type exactly when they carry the same data. TXT strings are
 * JSON-encoded so that ["a b"] and ["a", "b"] differ; an SOA is unique per zone and gets its fields.
 */
function dataKey(data: RecordData): string {
  if (typeof data === 'string') return data;
  if (Array.isArray(data)) return JSON.stringify(data);
  if ('exchange' in data) return `${data.preference} ${data.exchange}`;
  return JSON.stringify(data);
}

/** The data of a checked type from its wire form (RFC 3597 §5 `\#`), or undefined when the octets are not one. */
function decodeCheckedRdata(type: RecordType, octets: Buffer): RecordData | undefined {
  let at = 0;
  const name = (): string | undefined => {
    const labels: string[] = [];
    for (;;) {
      const length = octets[at];
      if (length === undefined || length > MAX_LABEL_OCTETS) return undefined;
      at++;
      if (length === 0) break;
      if (at + length > octets.length) return undefined;
      const label = octets.subarray(at, at + length).toString('latin1');
      if (!/^[\x21-\x7e]+$/.test(label) || label.includes('.')) return undefined;
      labels.push(label.toLowerCase());
      at += length;
    }
    const joined = labels.join('.');
    return joined.length > MAX_NAME_OCTETS ? undefined : joined;
  };
  const u32 = (): number | undefined => (at + 4 <= octets.length ? octets.readUInt32BE((at += 4) - 4) : undefined);
  let data: RecordData | undefined;
  switch (type) {
    case 'A':
      if (octets.length === 4) data = [...octets].join('.');
      at = octets.length;
      break;
    case 'AAAA':
      if (octets.length === 16) data = canonicalIpv6(Array.from({ length: 8 }, (_, i) => octets.readUInt16BE(i * 2).toString(16)).join(':'));
      at = octets.length;
      break;
    case 'NS':
    case 'CNAME':
    case 'PTR':
      data = name();
      break;
    case 'MX': {
      if (octets.length < 3) return undefined;
      const preference = octets.readUInt16BE(0);
      at = 2;
      const exchange = name();
      data = exchange === undefined ? undefined : { preference, exchange };
      break;
    }
    case 'TXT': {
      const strings: string[] = [];
      while (at < octets.length) {
        const length = octets[at]!;
        if (at + 1 + length > octets.length) return undefined;
        try {
          strings.push(utf8.decode(octets.subarray(at + 1, at + 1 + length)));
        } catch {
          return undefined;
        }
        at += 1 + length;
      }
      data = strings.length > 0 ? strings : undefined;
      break;
    }
    case 'SOA': {
      const mname = name();
      const rname = mname === undefined ? undefined : name();
      const numbers = [u32(), u32(), u32(), u32(), u32()];
      if (mname === undefined || rname === undefined || numbers.some((n) => n === undefined)) return undefined;
      const [serial, refresh, retry, expire, minimum] = numbers as number[];
      data = { mname, rname, serial: serial!, refresh: refresh!, retry: retry!, expire: expire!, minimum: minimum! };
      break;
    }
  }
  return at === octets.length ? data : undefined;
}

/**
 * The RFC 5952 text form of an IPv6 address already checked by `isIPv6`: lower case, no leading
 * zeros, the longest run of two or more zero groups shortened to "::" (the first of equal runs).
 */
export function canonicalIpv6(address: string): string {
  const groupsOf = (part: string): number[] => {
    if (part === '') return [];
    const groups: number[] = [];
    for (const piece of part.split(':')) {
      if (piece.includes('.')) {
        const [a = 0, b = 0, c = 0, d = 0] = piece.split('.').map(Number);
        groups.push((a << 8) | b, (c << 8) | d);
      } else groups.push(parseInt(piece, 16));
    }
    return groups;
  };
  const gap = address.indexOf('::');
  let groups: number[];
  if (gap === -1) groups = groupsOf(address);
  else {
    const left = groupsOf(address.slice(0, gap));
    const right = groupsOf(address.slice(gap + 2));
    groups = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  }
  // RFC 5952 §4.2.2, §4.2.3
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < groups.length; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < groups.length && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (list: number[]): string => list.map((group) => group.toString(16)).join(':');
  if (bestStart === -1) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLength))}`;
}
