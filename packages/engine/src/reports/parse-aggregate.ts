/**
 * DMARC aggregate reports: RFC 7489 Appendix C (no namespace) and RFC 9990 (namespace
 * `urn:ietf:params:xml:ns:dmarc-2.0`, or the 9990 shape without it), read into one shape.
 *
 * Elements are matched by local name, so either schema, a prefixed root and extra elements (RFC 9990
 * `extension`, a record's namespaced extensions, `xsd`/`xsi` attributes) all read the same. Tolerated
 * as real reporters send them: missing optional elements, several `auth_results` entries, IPv6,
 * whitespace, mixed-case words (`Pass`), `human_result`, `envelope_to`, `identities` for
 * `identifiers`, dates written `1538204542.0`, an empty `org_name` or `selector`. Each such repair is
 * a warning. A record whose `source_ip`, `count` or `header_from` is unusable is dropped with a
 * warning; a report whose metadata is unusable is refused whole, and so is one with a DOCTYPE or a
 * foreign entity (xml.ts) or more than `MAX_REPORT_RECORDS` records: refused means no rows at all.
 */
import { canonicalName } from '../dns/name.js';
import { formatIp4, formatIp6, parseClientAddress } from '../spf/address.js';
import { MAX_UNCOMPRESSED_BYTES } from './unpack.js';
import type { AggregateRecord, AggregateReport, DkimAuthResult, OverrideReason, ParseOutcome, PolicyPublished, SpfAuthResult } from './types.js';
import { child, childrenNamed, decodeXmlBytes, parseXml, type XmlElement } from '../xml/reader.js';

/** RFC 9990 §3.1 (IANA "ns" registry): the namespace of the 2.0 schema. */
export const DMARC_2_NAMESPACE = 'urn:ietf:params:xml:ns:dmarc-2.0';
/** Records in one report (parsedmarc's largest sample has 2,286; a day of a big domain tens of thousands). */
export const MAX_REPORT_RECORDS = 200_000;
/** RFC 9990 §3.1.5: a row "SHOULD contain no more than 100 signatures"; more are cut with a warning. */
export const MAX_AUTH_RESULTS_PER_RECORD = 100;
/** Warnings kept per report; the rest are counted. */
export const MAX_REPORT_WARNINGS = 50;
/** Characters kept of a free-text field (comments, human results, contact info). */
export const MAX_TEXT_FIELD = 1000;

/**
 * The elements of a report (RFC 7489 Appendix C, RFC 9990 §3.1): only these are kept in the tree while
 * parsing; any other element (an extension, or millions of empty ones) is read and dropped as it closes.
 */
export const AGGREGATE_ELEMENTS: ReadonlySet<string> = new Set([
  'feedback', 'version', 'report_metadata', 'org_name', 'email', 'extra_contact_info', 'report_id', 'date_range', 'begin', 'end', 'error', 'generator',
  'policy_published', 'domain', 'adkim', 'aspf', 'p', 'sp', 'np', 'pct', 'fo', 'testing', 'discovery_method',
  'record', 'row', 'source_ip', 'count', 'policy_evaluated', 'disposition', 'dkim', 'spf', 'reason', 'type', 'comment',
  'identifiers', 'identities', 'header_from', 'envelope_from', 'envelope_to', 'auth_results', 'selector', 'result', 'human_result', 'scope',
]);
/** Children of one name kept under one element (RFC 9990 §3.1.5: 100 DKIM and 100 SPF results fit); more are dropped with a warning. */
export const MAX_REPEATED_ELEMENTS = 200;
/** Elements kept inside one record; more are dropped with a warning. */
export const MAX_RECORD_ELEMENTS = 10_000;
/** Elements kept outside the records (metadata, policy); more are dropped with a warning. */
export const MAX_HEADER_ELEMENTS = 10_000;

/** A report may end this far past `now` (clock skew); later is refused (mox refuses past 60 s). */
export const MAX_FUTURE_SKEW_SECONDS = 3600;

/** Options of the report parsers. */
export interface ParseReportOptions {
  /** Records (aggregate) or policies plus failure details (TLS) above which a report is refused. */
  maxRecords?: number;
  /** When given, a report whose period ends more than `MAX_FUTURE_SKEW_SECONDS` after it is refused (`invalid-field`). */
  now?: Date | number;
}

/** `invalid-field` when `end` lies past `now` plus the skew; null otherwise or without `now`. */
export function futureProblem(end: number, now: Date | number | undefined): string | null {
  if (now === undefined) return null;
  const at = typeof now === 'number' ? now : Math.floor(now.getTime() / 1000);
  return end > at + MAX_FUTURE_SKEW_SECONDS ? `the report period ends in the future (${new Date(end * 1000).toISOString()})` : null;
}

type Refusal = { ok: false; reason: 'missing-field' | 'invalid-field' | 'not-a-report' | 'too-many-records'; detail: string };

/** Collects warnings up to the cap. */
class Warnings {
  readonly list: string[] = [];
  private extra = 0;
  add(text: string): void {
    if (this.list.length < MAX_REPORT_WARNINGS) this.list.push(text);
    else this.extra++;
  }
  done(): string[] {
    return this.extra > 0 ? [...this.list, `… and ${this.extra} more warnings`] : this.list;
  }
}

const text = (element: XmlElement | undefined): string => (element === undefined ? '' : element.text.trim());
const optional = (element: XmlElement | undefined): string | null => {
  const value = text(element);
  return value === '' ? null : value.slice(0, MAX_TEXT_FIELD);
};
const word = (element: XmlElement | undefined): string => text(element).toLowerCase();

/** Epoch seconds as reporters write them: digits, sometimes with `.0` (parsedmarc splits on the dot). */
function epochSeconds(value: string): number | null {
  const match = /^(\d{1,12})(?:\.\d*)?$/.exec(value);
  return match === null ? null : Number(match[1]);
}

/** A domain as reported, lower case, without a trailing dot; null when empty. */
function domainOf(value: string): string | null {
  const trimmed = value.trim();
  return trimmed === '' ? null : canonicalName(trimmed.slice(0, 254));
}

/** The canonical text of an address (RFC 5952 for IPv6; IPv4-mapped IPv6 becomes IPv4); null when it is none. */
export function canonicalIp(value: string): string | null {
  const address = parseClientAddress(value.trim());
  if (address === null) return null;
  return address.version === 4 ? formatIp4(address.value) : formatIp6(address.words);
}

/**
 * Parses a DMARC aggregate report (decompressed XML bytes or text). Whole or nothing: a refused
 * report has a reason and a sentence, and no records.
 */
export function parseAggregateReport(input: Uint8Array | string, options: ParseReportOptions = {}): ParseOutcome<AggregateReport> {
  const maxRecords = options.maxRecords ?? MAX_REPORT_RECORDS;
  if (input.length > MAX_UNCOMPRESSED_BYTES) return { ok: false, reason: 'too-large', detail: `the report has ${input.length} ${typeof input === 'string' ? 'characters' : 'bytes'}, over the ${MAX_UNCOMPRESSED_BYTES} cap` };
  const warnings = new Warnings();
  let text: string;
  if (typeof input === 'string') text = input;
  else {
    const decoded = decodeXmlBytes(input);
    text = decoded.text;
    for (const warning of decoded.warnings) warnings.add(warning);
  }
  // A stray, unclosed <xs:schema …> start tag inside the report (parsedmarc#18): dropped, with a warning.
  if (text.includes('<xs:schema') && !text.includes('</xs:schema')) {
    text = text.replace(/<xs:schema\b[^<>]*>/g, '');
    warnings.add('a stray <xs:schema> tag was removed');
  }
  const records: AggregateRecord[] = [];
  let recordCount = 0;
  let rootLocal: string | null = null;
  // What the tree keeps is bounded: records are converted as they close and dropped, unknown elements
  // are dropped, and at most MAX_RECORD_ELEMENTS per record and MAX_HEADER_ELEMENTS outside records stay.
  let inRecord = false;
  let keptInRecord = 0;
  let keptInHeader = 0;
  // Per open element (by depth), how many children of each name it kept: one count per depth and
  // name (only AGGREGATE_ELEMENTS' names are counted), started again by the generation the element at
  // that depth opened in, so no Map is made per element.
  const repeats: Map<string, { generation: number; count: number }>[] = [];
  const generations: number[] = [];
  let generation = 0;
  let droppedOverCap = 0;
  const xml = parseXml(text, {
    onOpen: (element, depth) => {
      if (depth === 1) inRecord = element.local === 'record';
      generations[depth] = ++generation;
    },
    onClose: (element, depth) => {
      if (depth === 0) {
        rootLocal = element.local;
        return true;
      }
      if (depth === 1 && element.local === 'record') {
        inRecord = false;
        keptInRecord = 0;
        recordCount++;
        if (recordCount <= maxRecords) {
          const record = readRecord(element, recordCount, warnings);
          if (record !== null) records.push(record);
        }
        return false;
      }
      if (!AGGREGATE_ELEMENTS.has(element.local)) return false;
      const siblings = (repeats[depth - 1] ??= new Map());
      const opened = generations[depth - 1]!;
      let kept = siblings.get(element.local);
      if (kept === undefined) siblings.set(element.local, (kept = { generation: opened, count: 0 }));
      else if (kept.generation !== opened) {
        kept.generation = opened;
        kept.count = 0;
      }
      const same = ++kept.count;
      if (same > MAX_REPEATED_ELEMENTS || (inRecord ? ++keptInRecord > MAX_RECORD_ELEMENTS : ++keptInHeader > MAX_HEADER_ELEMENTS)) {
        droppedOverCap++;
        return false;
      }
      return true;
    },
  });
  if (!xml.ok) return xml;
  for (const warning of xml.warnings) warnings.add(warning);
  if (droppedOverCap > 0) warnings.add(`${droppedOverCap} elements over the caps (${MAX_REPEATED_ELEMENTS} of one name under one element, ${MAX_RECORD_ELEMENTS} per record, ${MAX_HEADER_ELEMENTS} outside records) were left out`);
  const root = xml.root;
  if (rootLocal !== 'feedback' && root.local !== 'feedback') return { ok: false, reason: 'not-a-report', detail: `the root element is <${root.name}>, not <feedback>: not a DMARC aggregate report` };
  if (recordCount > maxRecords) return { ok: false, reason: 'too-many-records', detail: `the report has ${recordCount} records, over the cap of ${maxRecords}` };
  const header = readHeader(root, warnings);
  if (!header.ok) return header;
  const future = futureProblem(header.value.dateRange.end, options.now);
  if (future !== null) return { ok: false, reason: 'invalid-field', detail: future };
  if (recordCount === 0) warnings.add('the report has no <record> (RFC 7489 Appendix C requires one or more)');
  else if (records.length === 0) warnings.add('every record was dropped');
  return { ok: true, report: { ...header.value, records }, warnings: warnings.done() };
}

function readHeader(root: XmlElement, warnings: Warnings): { ok: true; value: Omit<AggregateReport, 'records'> } | Refusal {
  const metadata = child(root, 'report_metadata');
  if (metadata === undefined) return { ok: false, reason: 'missing-field', detail: 'no <report_metadata>' };
  const orgName = text(child(metadata, 'org_name'));
  if (orgName === '') warnings.add('<org_name> is empty or missing');
  const email = optional(child(metadata, 'email'));
  if (email === null) warnings.add('<email> is empty or missing');
  // RFC 9990 ridfmt allows the id in angle brackets.
  const reportId = text(child(metadata, 'report_id')).replace(/^<(.*)>$/, '$1').trim();
  if (reportId === '') return { ok: false, reason: 'missing-field', detail: 'no <report_id> in <report_metadata>' };
  const range = child(metadata, 'date_range');
  if (range === undefined) return { ok: false, reason: 'missing-field', detail: 'no <date_range> in <report_metadata>' };
  const beginText = text(child(range, 'begin'));
  const endText = text(child(range, 'end'));
  if (beginText === '' || endText === '') return { ok: false, reason: 'missing-field', detail: '<date_range> needs <begin> and <end>' };
  const begin = epochSeconds(beginText);
  const end = epochSeconds(endText);
  if (begin === null || end === null) return { ok: false, reason: 'invalid-field', detail: `<date_range> is not in epoch seconds (begin "${beginText.slice(0, 30)}", end "${endText.slice(0, 30)}")` };
  if (end < begin) return { ok: false, reason: 'invalid-field', detail: `<date_range> ends (${end}) before it begins (${begin})` };
  const errors = childrenNamed(metadata, 'error')
    .map((e) => text(e).slice(0, MAX_TEXT_FIELD))
    .filter((e) => e !== '');
  const policies = childrenNamed(root, 'policy_published');
  if (policies.length === 0) return { ok: false, reason: 'missing-field', detail: 'no <policy_published>' };
  if (policies.length > 1) warnings.add(`<policy_published> appears ${policies.length} times: the first is used`);
  const policy = readPolicy(policies[0]!, warnings);
  if (policy === null) return { ok: false, reason: 'missing-field', detail: 'no <domain> in <policy_published>' };
  const version = optional(child(root, 'version'));
  const generator = optional(child(metadata, 'generator'));
  const namespace = root.namespace;
  // RFC 9990 by its namespace, a 2.x version, or fields only 9990 has (not `np` alone: Google sent it in 7489 reports).
  const schema = namespace === DMARC_2_NAMESPACE || (version !== null && version.startsWith('2')) || policy.testing !== null || policy.discoveryMethod !== null ? '9990' : '7489';
  if (namespace !== null && namespace !== DMARC_2_NAMESPACE) warnings.add(`unknown namespace "${namespace.slice(0, 100)}" on <feedback>: read by element names`);
  return {
    ok: true,
    value: {
      kind: 'aggregate',
      schema,
      namespace,
      version,
      reporter: { orgName: orgName.slice(0, MAX_TEXT_FIELD), email, extraContactInfo: optional(child(metadata, 'extra_contact_info')), generator },
      reportId: reportId.slice(0, MAX_TEXT_FIELD),
      dateRange: { begin, end },
      errors,
      policyPublished: policy,
    },
  };
}

function readPolicy(element: XmlElement, warnings: Warnings): PolicyPublished | null {
  const domain = domainOf(text(child(element, 'domain')));
  if (domain === null) return null;
  const pctText = text(child(element, 'pct'));
  const pct = /^\d{1,3}$/.test(pctText) ? Number(pctText) : null;
  if (pctText !== '' && pct === null) warnings.add(`<pct> "${pctText.slice(0, 20)}" is not a number: ignored`);
  const p = word(child(element, 'p')) || null;
  if (p === null) warnings.add('<p> is missing in <policy_published>');
  return {
    domain,
    adkim: word(child(element, 'adkim')) || 'r',
    aspf: word(child(element, 'aspf')) || 'r',
    p,
    sp: word(child(element, 'sp')) || null,
    np: word(child(element, 'np')) || null,
    pct,
    fo: optional(child(element, 'fo')),
    testing: word(child(element, 'testing')) || null,
    discoveryMethod: word(child(element, 'discovery_method')) || null,
  };
}

function readRecord(record: XmlElement, n: number, warnings: Warnings): AggregateRecord | null {
  const row = child(record, 'row');
  if (row === undefined) {
    warnings.add(`record ${n}: no <row>: dropped`);
    return null;
  }
  const ipText = text(child(row, 'source_ip'));
  const sourceIp = canonicalIp(ipText);
  if (sourceIp === null) {
    warnings.add(`record ${n}: <source_ip> "${ipText.slice(0, 50)}" is not an IP address: dropped`);
    return null;
  }
  const countText = text(child(row, 'count'));
  if (!/^\d{1,15}$/.test(countText)) {
    warnings.add(`record ${n}: <count> "${countText.slice(0, 20)}" is not a whole number: dropped`);
    return null;
  }
  const identifiers = child(record, 'identifiers') ?? child(record, 'identities');
  const headerFrom = identifiers === undefined ? null : domainOf(text(child(identifiers, 'header_from')));
  if (headerFrom === null) {
    warnings.add(`record ${n}: no <header_from>: dropped`);
    return null;
  }
  const evaluated = child(row, 'policy_evaluated');
  let dkimResult = word(evaluated && child(evaluated, 'dkim'));
  let spfResult = word(evaluated && child(evaluated, 'spf'));
  // Required by both schemas; a missing one is never read as a pass.
  if (dkimResult === '' || spfResult === '') {
    warnings.add(`record ${n}: <policy_evaluated> lacks <dkim> or <spf>: taken as fail`);
    dkimResult ||= 'fail';
    spfResult ||= 'fail';
  }
  const reasons: OverrideReason[] = (evaluated === undefined ? [] : childrenNamed(evaluated, 'reason')).map((reason) => {
    const type = word(child(reason, 'type'));
    // A text-only <reason> is kept as type "other" with its text as the comment (cry-inc/dmarc-report-viewer#21); an empty one as "".
    const textOnly = reason.children.length === 0 && text(reason) !== '';
    return { type: type !== '' ? type : textOnly ? 'other' : '', comment: optional(child(reason, 'comment')) ?? (textOnly ? optional(reason) : null) };
  });
  const auth = child(record, 'auth_results');
  const dkim: DkimAuthResult[] = [];
  const spf: SpfAuthResult[] = [];
  if (auth !== undefined) {
    const dkimElements = childrenNamed(auth, 'dkim');
    const spfElements = childrenNamed(auth, 'spf');
    if (dkimElements.length + spfElements.length > MAX_AUTH_RESULTS_PER_RECORD) warnings.add(`record ${n}: more than ${MAX_AUTH_RESULTS_PER_RECORD} auth results: the first ${MAX_AUTH_RESULTS_PER_RECORD} kept`);
    for (const element of dkimElements.slice(0, MAX_AUTH_RESULTS_PER_RECORD)) {
      const domain = domainOf(text(child(element, 'domain')));
      if (domain === null) continue;
      dkim.push({ domain, selector: optional(child(element, 'selector')), result: word(child(element, 'result')) || 'none', humanResult: optional(child(element, 'human_result')) });
    }
    for (const element of spfElements.slice(0, Math.max(0, MAX_AUTH_RESULTS_PER_RECORD - dkim.length))) {
      spf.push({
        domain: domainOf(text(child(element, 'domain'))),
        scope: word(child(element, 'scope')) || 'mfrom',
        // `hardfail` was seen in the wild (cry-inc/dmarc-report-viewer#21): it is a fail.
        result: ((r) => (r === 'hardfail' ? 'fail' : r))(word(child(element, 'result'))) || 'none',
        humanResult: optional(child(element, 'human_result')),
      });
    }
  }
  return {
    sourceIp,
    count: Number(countText),
    disposition: word(evaluated && child(evaluated, 'disposition')) || 'none',
    dkimResult,
    spfResult,
    headerFrom,
    envelopeFrom: identifiers === undefined ? null : domainOf(text(child(identifiers, 'envelope_from'))),
    envelopeTo: identifiers === undefined ? null : domainOf(text(child(identifiers, 'envelope_to'))),
    auth: { dkim, spf },
    reasons,
  };
}
