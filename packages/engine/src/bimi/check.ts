/**
 * `checkBimi(domain, options)`: will mailbox providers show this domain's logo (BIMI)? The record
 * (draft-brand-indicators-for-message-identification-14 §4, §7.2 discovery with the fallback to
 * the organizational domain), the DMARC prerequisite (§7.1) from the engine's own discovery, the
 * logo fetched and held to SVG Tiny PS, and the mark certificate verified by signature to the Mark
 * Verifying Authorities' roots. Its own section: the spoof verdict never depends on it.
 *
 * Nothing throws for a DNS or network condition: a failed lookup or fetch makes the grade
 * `unknown`, never `not-published`.
 */
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { discoverDmarc } from '../dmarc/discover.js';
import { describeAnswer, type DnsAnswer, type Resolver } from '../dns/types.js';
import { SpoofCheckError } from '../errors.js';
import type { Finding } from '../findings.js';
import { normaliseDomainInput, type NormaliseOptions } from '../input.js';
import type { ConnectPorts } from '../net/ports.js';
import { tlsTrust } from '../net/tls-peer.js';
import { bimiRootsFromPem, checkMarkCertificate, shippedBimiRoots, unjudgedCertificate, type BimiRoot } from './certificate.js';
import { bimiDmarcEligibility } from './eligibility.js';
import { fetchBimiFile, type BimiFetch, type BimiFetchOptions } from './fetch.js';
import { bimiRecordName, bimiSelectorProblem, DEFAULT_BIMI_SELECTOR, lpsMatches, normaliseLocalPart, parseBimiRecord, selectBimiRecord } from './parse.js';
import { MAX_SVG_BYTES, MAX_SVG_INFLATED_BYTES, validateSvg } from './svg.js';
import type { BimiCertificate, BimiFetchFailure, BimiGrade, BimiLogo, BimiQuery, BimiResult, BimiTags, ProviderEligibility } from './types.js';

/** A certificate this close to its end gets a warning (days). */
export const BIMI_EXPIRY_WARNING_DAYS = 30;

/** Options of `checkBimi`. */
export interface BimiOptions {
  /** Where DNS answers come from (the same port as `checkDomain`). */
  resolver: Resolver;
  /** The BIMI selector (default `default`), as a `BIMI-Selector` header would name it. */
  selector?: string | undefined;
  /** The sender's local part (`ceo` of ceo@brand.example), for records with `lps=` (draft §7.2 step 5). */
  localPart?: string | undefined;
  /** The trust anchors instead of the shipped Mark Verifying Authority roots. */
  roots?: readonly BimiRoot[] | undefined;
  /** Extra roots (PEM text) added to the anchors: labs and private authorities (`--bimi-roots`). */
  extraRoots?: string | undefined;
  /** Ports to connect to instead of 443 (test labs); only `https` is used. */
  connectPorts?: ConnectPorts | undefined;
  /** Extra trusted TLS roots (PEM) for the HTTPS fetches (`--tls-ca`). */
  tlsCa?: string | undefined;
  /** Connect to loopback and private addresses (test labs only; default false). */
  allowPrivateAddresses?: boolean | undefined;
  /** Deadline of each fetch in milliseconds (default 10 s). */
  timeoutMs?: number | undefined;
  /** Input rules (special-use names). */
  input?: NormaliseOptions | undefined;
  /** The clock certificates are judged against. */
  now?: (() => Date) | undefined;
  /**
   * The time the mark certificate is judged at instead of `now` (`check --at DATE`: a certificate at
   * another date); the HTTPS fetches still check their servers' certificates at `now`.
   */
  validationTime?: Date | undefined;
}

/** Apple Mail does not trust Entrust VMCs issued after this day (Apple, November 2024; research/bimi.md §2). */
export const APPLE_ENTRUST_CUTOFF = '2024-11-15T23:59:59.999Z';

/** Fetch failures that say nothing definite about the publisher (the grade is then `unknown`). */
const UNSETTLED_FETCH: ReadonlySet<BimiFetchFailure['error']> = new Set(['dns-failure', 'unreachable', 'timeout', 'http-error', 'http-status']);

/**
 * Checks BIMI for `domain`. Throws `SpoofCheckError('invalid_domain')` for input that is not a
 * domain, and `Error` for an unusable selector or extra roots; never for DNS or network conditions.
 */
export async function checkBimi(domain: string, options: BimiOptions): Promise<BimiResult> {
  const normalised = normaliseDomainInput(domain, options.input);
  if (!normalised.ok) throw new SpoofCheckError('invalid_domain', normalised.message, { why: 'Checking BIMI needs a domain name.', fix: normalised.fix });
  const name = normalised.domain;
  const selector = (options.selector ?? DEFAULT_BIMI_SELECTOR).toLowerCase();
  const selectorProblem = bimiSelectorProblem(selector);
  if (selectorProblem) throw new Error(selectorProblem);
  const roots = [...(options.roots ?? shippedBimiRoots()), ...(options.extraRoots ? bimiRootsFromPem(options.extraRoots, 'added root') : [])];
  const now = options.now ?? (() => new Date());
  const { resolver } = options;
  const fetchOptions: BimiFetchOptions = { port: options.connectPorts?.https, trust: tlsTrust(options.tlsCa), allowPrivateAddresses: options.allowPrivateAddresses, timeoutMs: options.timeoutMs, now };

  const findings: Finding[] = [];
  const steps = { record: [] as string[], dmarc: [] as string[], logo: [] as string[], certificate: [] as string[] };
  const queries: BimiQuery[] = [];
  const authorName = bimiRecordName(selector, name);
  const [discovery, authorAnswer] = await Promise.all([discoverDmarc(name, resolver), resolver.resolve(authorName, 'TXT')]);
  const org = discovery.organizationalDomain || name;
  const { dmarc, warnings: dmarcWarnings } = bimiDmarcEligibility(discovery);

  // Discovery (draft §7.2): the author domain, then the organizational domain with the same selector.
  let record: BimiResult['record'] = null;
  let lookupFailed = false;
  let multiple = false;
  const read = (queryName: string, answer: DnsAnswer<'TXT'>): string | null => {
    if (answer.kind === 'error') {
      queries.push({ name: queryName, outcome: 'error', error: describeAnswer(answer) });
      lookupFailed = true;
      findings.push({ id: 'bimi-lookup-failed', severity: 'warning', title: 'BIMI Lookup Failed', detail: `The lookup of ${queryName} failed (${describeAnswer(answer)}); whether a BIMI record is published cannot be told. A failed lookup is not a missing record; check again later.` });
      return null;
    }
    const selection = selectBimiRecord(answer.kind === 'records' ? answer.records : []);
    if (selection.kind === 'one') {
      queries.push({ name: queryName, outcome: 'record' });
      return selection.text;
    }
    if (selection.kind === 'multiple') {
      queries.push({ name: queryName, outcome: 'multiple' });
      multiple = true;
      findings.push({ id: 'bimi-multiple-records', severity: 'critical', title: 'Several BIMI Records', detail: `${queryName} publishes ${selection.count} records starting with v=BIMI1; receivers then use none. Keep exactly one.` });
      steps.record.push(`Keep exactly one TXT record starting with v=BIMI1 at ${queryName}; delete the others.`);
      return null;
    }
    queries.push({ name: queryName, outcome: 'none' });
    if (selection.lookalike !== null) {
      findings.push({ id: 'bimi-lookalike', severity: 'warning', title: 'BIMI Record Not Recognised', detail: `${queryName} holds "${selection.lookalike.slice(0, 120)}", which does not start with v=BIMI1 exactly (receivers do not fix case or spacing), so it is ignored.` });
      steps.record.push(`Start the record at ${queryName} with "v=BIMI1;" exactly (upper case, nothing before it).`);
    }
    return null;
  };
  let text = read(authorName, authorAnswer);
  let at: 'author-domain' | 'organizational-domain' = 'author-domain';
  let recordName = authorName;
  if (text === null && !lookupFailed && !multiple && org !== name) {
    const orgName = bimiRecordName(selector, org);
    text = read(orgName, await resolver.resolve(orgName, 'TXT'));
    at = 'organizational-domain';
    recordName = orgName;
  }
  // Draft §7.2 steps 5 and 8: a record with lps= that matches the sender's local part defers to the
  // record at <local part>._bimi.<the same domain>, when that one is valid.
  if (text !== null && options.localPart !== undefined) {
    const parsed = parseBimiRecord(text);
    const local = normaliseLocalPart(options.localPart);
    if (parsed.ok && parsed.tags.lps !== null && local !== null && lpsMatches(parsed.tags.lps, local)) {
      const domainOfRecord = at === 'author-domain' ? name : org;
      const localName = bimiRecordName(local, domainOfRecord);
      const answer = await resolver.resolve(localName, 'TXT');
      const selection = answer.kind === 'records' ? selectBimiRecord(answer.records) : null;
      queries.push({ name: localName, outcome: answer.kind === 'error' ? 'error' : selection?.kind === 'one' ? 'record' : selection?.kind === 'multiple' ? 'multiple' : 'none', ...(answer.kind === 'error' ? { error: describeAnswer(answer) } : {}) });
      if (selection?.kind === 'one' && parseBimiRecord(selection.text).ok) {
        text = selection.text;
        recordName = localName;
      }
    }
  }
  if (text !== null) record = { name: recordName, text, at };
  else if (!lookupFailed && !multiple) await probeMisplaced(name, selector, resolver, queries, findings, steps.record);

  // The record's tags.
  let tags: BimiTags | null = null;
  let recordInvalid = false;
  if (record) {
    const parsed = parseBimiRecord(record.text);
    if (parsed.ok) {
      tags = parsed.tags;
      for (const warning of parsed.warnings) findings.push({ id: 'bimi-record-warning', severity: 'warning', title: 'BIMI Record Note', detail: `${record.name}: ${warning}.` });
    } else {
      recordInvalid = true;
      findings.push({ id: 'bimi-record-invalid', severity: 'critical', title: 'BIMI Record Invalid', detail: `${record.name}: ${parsed.problem}. Receivers ignore it.` });
      steps.record.push(`Fix the TXT record at ${record.name}: ${parsed.problem} (for example "v=BIMI1; l=https://${name}/bimi/logo.svg;").`);
    }
  }
  const declined = tags !== null && tags.l === '' && !tags.a;

  // DMARC (draft §7.1): only when a record would be used.
  if (dmarc.eligible === false) {
    for (const block of dmarc.blockedBy) findings.push({ id: 'bimi-dmarc-blocked', severity: tags && !declined ? 'critical' : 'warning', title: 'DMARC Too Lax for BIMI', detail: `${block.detail}.` });
    steps.dmarc.push(
      dmarc.blockedBy.some((b) => b.reason === 'no-record' || b.reason === 'multiple')
        ? `Publish one DMARC record at _dmarc.${org} with p=quarantine (then p=reject) once your aggregate reports show every sender passing; BIMI is ignored until then.`
        : `Move ${dmarc.blockedBy.map((b) => b.record).filter((v, i, a) => a.indexOf(v) === i).join(' and ')} to p=quarantine (then p=reject) once your aggregate reports show every sender passing; remove pct= and t=y and do not publish sp=none. BIMI is ignored until then, also for ${name}.`,
    );
  } else if (dmarc.eligible === null) {
    findings.push({ id: 'bimi-dmarc-unknown', severity: 'warning', title: 'DMARC Lookup Failed', detail: `The DMARC lookup for ${name} failed${discovery.failedQuery ? ` (${discovery.failedQuery.name}: ${discovery.failedQuery.reason})` : ''}; whether BIMI is allowed cannot be told.` });
  }
  for (const warning of dmarcWarnings) findings.push({ id: 'bimi-dmarc-pct', severity: 'warning', title: 'DMARC pct Below 100', detail: `${warning}.` });

  // The logo and the certificate, fetched side by side.
  let logo: BimiLogo | null = null;
  let certificate: BimiCertificate | null = null;
  let fetchUnsettled = false;
  if (tags && !declined) {
    const [logoFetch, certFetch] = await Promise.all([
      tags.l !== '' ? fetchBimiFile(tags.l, 'logo', resolver, fetchOptions) : Promise.resolve(null),
      tags.a ? fetchBimiFile(tags.a, 'certificate', resolver, fetchOptions) : Promise.resolve(null),
    ]);
    let inflated: Uint8Array | null = null;
    if (logoFetch) {
      const built = judgeLogo(logoFetch, findings, steps.logo);
      logo = built.logo;
      inflated = built.inflated;
      if (logo.fetch && UNSETTLED_FETCH.has(logo.fetch.error)) fetchUnsettled = true;
    }
    if (certFetch && tags.a) {
      certificate = judgeCertificate(certFetch, tags.a, { domain: name, org, selector, logo: inflated, roots, now: options.validationTime ?? now(), logoUrl: tags.l }, findings, steps.certificate);
      if (certificate.fetch && UNSETTLED_FETCH.has(certificate.fetch.error)) fetchUnsettled = true;
    } else if (!tags.a) {
      findings.push({ id: 'bimi-no-certificate', severity: 'info', title: 'No Mark Certificate', detail: `The record has no a= tag: the logo is self-asserted. Yahoo may show it; Gmail needs a VMC or CMC and Apple Mail a VMC.` });
      steps.certificate.push(`For Gmail and Apple Mail, obtain a VMC (registered trademark) or a CMC (Gmail only) for the logo at ${tags.l} from a Mark Verifying Authority (DigiCert, GlobalSign, SSL.com), serve its PEM (leaf first) over HTTPS and add a=<its URL>; to the record at ${record?.name ?? authorName}.`);
    }
  }

  // The grade.
  const logoBlocks = logo !== null && (logo.violations.length > 0 || (logo.fetch !== null && !UNSETTLED_FETCH.has(logo.fetch.error)));
  const certBlocks = certificate !== null && certificateBlocks(certificate);
  let grade: BimiGrade;
  if (record === null) grade = lookupFailed ? 'unknown' : multiple ? 'not-ready' : 'not-published';
  else if (recordInvalid) grade = 'not-ready';
  else if (declined) grade = 'declined';
  else if (dmarc.eligible === false || logoBlocks || certBlocks) grade = 'not-ready';
  else if (dmarc.eligible === null || fetchUnsettled) grade = 'unknown';
  else if (certificate) grade = certificate.kind === 'CMC' ? 'ready-cmc' : 'ready-vmc';
  else grade = 'ready-self-asserted';

  if (record === null && !lookupFailed && !multiple) {
    findings.unshift({ id: 'bimi-not-published', severity: 'info', title: 'No BIMI Record', detail: `Neither ${authorName}${org !== name ? ` nor ${bimiRecordName(selector, org)}` : ''} publishes a BIMI record, so no mailbox provider shows a logo for ${name}.` });
    if (!steps.record.some((s) => s.startsWith('Move'))) {
      steps.record.push(`Publish TXT ${authorName} = "v=BIMI1; l=https://${name}/bimi/logo.svg;" (add a=https://${name}/bimi/vmc.pem; when you have a VMC or CMC). Gmail and Apple show nothing without a certificate.`);
    }
  }
  if (declined) findings.unshift({ id: 'bimi-declined', severity: 'info', title: 'BIMI Declined', detail: `${record?.name} publishes l= and a= empty: the owner declines to show a logo for ${name}.` });
  if (grade.startsWith('ready-')) findings.unshift({ id: 'bimi-ready', severity: 'success', title: 'BIMI Ready', detail: `The record, DMARC and the logo${certificate ? ` and the ${certificate.kind}` : ''} pass every check; display still depends on each provider's reputation checks.` });

  const nextSteps = grade === 'declined' ? [] : [...steps.record, ...(record || grade === 'not-published' ? steps.dmarc : []), ...steps.logo, ...steps.certificate];
  return {
    grade,
    selector,
    record,
    tags,
    queries,
    dmarc,
    logo,
    certificate,
    providers: providersOf(grade, certificate, dmarc.eligible, findings),
    findings,
    nextSteps,
  };
}

/** Apex, `_bimi.<domain>` and `_bimi.<selector>.<domain>`: where records are put by mistake (draft §4.2). */
async function probeMisplaced(domain: string, selector: string, resolver: Resolver, queries: BimiQuery[], findings: Finding[], steps: string[]): Promise<void> {
  const places = [domain, `_bimi.${domain}`, `_bimi.${selector}.${domain}`];
  const answers = await Promise.all(places.map((place) => resolver.resolve(place, 'TXT')));
  answers.forEach((answer, index) => {
    const place = places[index] as string;
    if (answer.kind !== 'records') return;
    const selection = selectBimiRecord(answer.records);
    if (selection.kind === 'none') return;
    queries.push({ name: place, outcome: selection.kind === 'one' ? 'record' : 'multiple' });
    findings.push({ id: 'bimi-misplaced', severity: 'warning', title: 'BIMI Record in the Wrong Place', detail: `A BIMI record is published at ${place}, where receivers never look; they read ${bimiRecordName(selector, domain)}.` });
    steps.push(`Move the record from ${place} to ${bimiRecordName(selector, domain)}.`);
  });
}

/** The logo: the fetch, the profile, and the inflated bytes for the certificate's hash. */
function judgeLogo(fetched: BimiFetch, findings: Finding[], steps: string[]): { logo: BimiLogo; inflated: Uint8Array | null } {
  if (!fetched.ok) {
    const failure: BimiFetchFailure = { error: fetched.error, httpStatus: fetched.httpStatus, detail: fetched.detail };
    const violations = fetched.error === 'too-large' ? [{ rule: 'size', line: 1, detail: `the file is larger than the fetch cap; the profile allows at most ${MAX_SVG_BYTES} bytes` }] : [];
    findings.push({ id: 'bimi-logo-fetch-failed', severity: UNSETTLED_FETCH.has(fetched.error) ? 'warning' : 'critical', title: 'BIMI Logo Not Fetched', detail: `${fetched.detail}.` });
    steps.push(`Serve ${fetched.url} over HTTPS with a publicly trusted certificate, answering 200 within 10 s with at most ${MAX_SVG_BYTES} bytes (${fetched.detail}).`);
    return { logo: { url: fetched.url, fetch: failure, bytes: null, compressed: false, sha256: null, title: null, viewBox: null, violations, warnings: [], dataUri: null }, inflated: null };
  }
  const report = validateSvg(fetched.body);
  let inflated: Uint8Array | null = fetched.body;
  if (report.compressed) {
    try {
      inflated = gunzipSync(fetched.body, { maxOutputLength: MAX_SVG_INFLATED_BYTES });
    } catch {
      inflated = null;
    }
  }
  for (const violation of report.violations) {
    findings.push({ id: 'bimi-logo-violation', severity: 'critical', title: `SVG Tiny PS: ${violation.rule}`, detail: `${fetched.url} line ${violation.line}: ${violation.detail}.` });
    steps.push(logoStep(violation.rule, violation.line, violation.detail));
  }
  for (const warning of report.warnings) findings.push({ id: 'bimi-logo-warning', severity: 'warning', title: `SVG Tiny PS recommendation: ${warning.rule}`, detail: `${fetched.url} line ${warning.line}: ${warning.detail}.` });
  const type = (fetched.contentType ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'image/svg+xml') findings.push({ id: 'bimi-logo-warning', severity: 'warning', title: 'SVG Served With Another Type', detail: `${fetched.url} is served as "${fetched.contentType ?? '(no Content-Type)'}"; serve it as image/svg+xml.` });
  return {
    logo: {
      url: fetched.url,
      fetch: null,
      bytes: fetched.body.length,
      compressed: report.compressed,
      sha256: createHash('sha256').update(fetched.body).digest('hex'),
      title: report.title,
      viewBox: report.viewBox,
      violations: report.violations,
      warnings: report.warnings,
      // Only a logo that passed every rule is handed on for display, inflated (an image, never markup).
      dataUri: report.violations.length === 0 && inflated !== null ? `data:image/svg+xml;base64,${Buffer.from(inflated).toString('base64')}` : null,
    },
    inflated,
  };
}

/** The step that fixes one SVG rule, with its line. */
function logoStep(rule: string, line: number, detail: string): string {
  switch (rule) {
    case 'version':
    case 'base-profile':
      return `Set version="1.2" baseProfile="tiny-ps" on <svg> (line ${line}).`;
    case 'title':
      return `Add <title>Your brand</title> as the first element inside <svg> (line ${line}): ${detail}.`;
    case 'root-xy':
      return `Remove x= and y= from <svg> (line ${line}).`;
    case 'raster-image':
      return `Replace the embedded image at line ${line} with vector paths.`;
    case 'size':
      return `Make the SVG at most ${MAX_SVG_BYTES} bytes (simplify paths, drop editor metadata).`;
    default:
      return `Fix line ${line} of the SVG: ${detail}.`;
  }
}

interface CertificateContext {
  domain: string;
  org: string;
  selector: string;
  logo: Uint8Array | null;
  roots: readonly BimiRoot[];
  now: Date;
  logoUrl: string;
}

function judgeCertificate(fetched: BimiFetch, url: string, context: CertificateContext, findings: Finding[], steps: string[]): BimiCertificate {
  if (!fetched.ok) {
    findings.push({ id: 'bimi-certificate-fetch-failed', severity: UNSETTLED_FETCH.has(fetched.error) ? 'warning' : 'critical', title: 'Mark Certificate Not Fetched', detail: `${fetched.detail}.` });
    steps.push(`Serve the PEM at ${url} over HTTPS with a publicly trusted certificate, answering 200 within 10 s (${fetched.detail}).`);
    return unjudgedCertificate(url, { error: fetched.error, httpStatus: fetched.httpStatus, detail: fetched.detail }, ['the document could not be fetched']);
  }
  const result = checkMarkCertificate({ pem: fetched.body.toString('utf8'), url, domain: context.domain, organizationalDomain: context.org, selector: context.selector, logo: context.logo, roots: context.roots, now: context.now });
  if (!result.chain.trusted) {
    findings.push({ id: 'bimi-chain-untrusted', severity: 'critical', title: 'Mark Certificate Not Trusted', detail: `${url}: ${result.chain.problems.join('; ')}.` });
    const expired = result.daysLeft !== null && result.daysLeft < 0;
    steps.push(
      expired
        ? `Renew the mark certificate at ${url}: it expired on ${result.notAfter?.slice(0, 10)}.`
        : result.chain.problems.some((p) => p.startsWith('no issuer'))
          ? `Append the issuing CA certificate after yours in ${url} (leaf first).`
          : `Serve a mark certificate issued by a recognised Mark Verifying Authority (DigiCert, GlobalSign, SSL.com) at ${url}: ${result.chain.problems[0] ?? 'the chain does not verify'}.`,
    );
  }
  if (!result.bimiEku && result.subject !== null) {
    findings.push({ id: 'bimi-certificate-no-eku', severity: 'critical', title: 'No BIMI Key Usage', detail: `The certificate at ${url} does not carry the BIMI extended key usage 1.3.6.1.5.5.7.3.31, so it is not a mark certificate.` });
    steps.push(`Replace ${url} with a mark certificate (a VMC or CMC carries the BIMI key usage 1.3.6.1.5.5.7.3.31).`);
  }
  if (!result.sanMatch && result.subject !== null) {
    findings.push({ id: 'bimi-certificate-san', severity: 'critical', title: 'Certificate for Another Domain', detail: `The certificate at ${url} covers ${result.san.join(', ') || 'no DNS name'}, not ${context.domain}${context.org !== context.domain ? ` or ${context.org}` : ''}.` });
    steps.push(`Your certificate covers ${result.san.join(', ') || 'no DNS name'}, not ${context.domain}: publish the record at a covered domain or reissue the certificate.`);
  }
  if (result.subject !== null && result.kind === null) {
    findings.push({ id: 'bimi-certificate-mark-type', severity: 'critical', title: 'Unknown Mark Type', detail: `The certificate at ${url} names the mark type "${result.markType}", which is neither a VMC nor a CMC mark type.` });
  }
  if (result.subject !== null && result.logotype === null) {
    findings.push({ id: 'bimi-certificate-no-logotype', severity: 'critical', title: 'No Logo in the Certificate', detail: `The certificate at ${url} has no RFC 9399 logotype extension with an SVG logo.` });
  } else if (result.logotype && !result.logotype.hashOk) {
    findings.push({ id: 'bimi-logotype-mismatch', severity: 'critical', title: 'Logo Differs From the Certificate', detail: `The logo served at ${context.logoUrl} does not have the ${result.logotype.hashAlg} hash the certificate names; receivers that compare drop the logo.` });
    steps.push(`Serve exactly the logo embedded in your certificate at ${context.logoUrl}, byte for byte.`);
  }
  if (result.chain.trusted && result.daysLeft !== null && result.daysLeft >= 0 && result.daysLeft <= BIMI_EXPIRY_WARNING_DAYS) {
    findings.push({ id: 'bimi-certificate-expiring', severity: 'warning', title: 'Mark Certificate Expiring', detail: `The certificate at ${url} expires on ${result.notAfter?.slice(0, 10)} (${result.daysLeft} days).` });
    steps.push(`Renew the mark certificate before ${result.notAfter?.slice(0, 10)}.`);
  }
  return result;
}

function certificateBlocks(certificate: BimiCertificate): boolean {
  if (certificate.fetch) return !UNSETTLED_FETCH.has(certificate.fetch.error);
  return !certificate.chain.trusted || !certificate.bimiEku || !certificate.sanMatch || certificate.kind === null || certificate.logotype === null || !certificate.logotype.hashOk;
}

/** Eligibility per provider (never a promise: reputation gates display). */
function providersOf(grade: BimiGrade, certificate: BimiCertificate | null, dmarcEligible: boolean | null, findings: Finding[]): BimiResult['providers'] {
  const no = (why: string): ProviderEligibility => ({ eligible: false, why });
  const blocker = findings.find((f) => f.severity === 'critical');
  const notReady = (): string =>
    grade === 'not-published'
      ? 'no BIMI record is published'
      : grade === 'declined'
        ? 'the owner declines BIMI (l= and a= empty)'
        : grade === 'unknown'
          ? 'a lookup or fetch failed, so it cannot be told'
          : dmarcEligible === false
            ? 'DMARC is not at enforcement (quarantine at 100% or reject)'
            : (blocker?.title ?? 'a check failed');
  if (!grade.startsWith('ready-')) {
    const why = notReady();
    return { gmail: no(why), apple: no(why), yahoo: no(why) };
  }
  const yahoo: ProviderEligibility = { eligible: true, why: certificate ? `a valid logo and a ${certificate.kind}; Yahoo also weighs sending reputation` : 'a valid self-asserted logo; Yahoo needs no certificate but weighs sending reputation' };
  if (grade === 'ready-vmc') {
    const entrustLate = certificate !== null && /entrust/i.test(`${certificate.chain.anchor ?? ''} ${certificate.issuer ?? ''}`) && (certificate.notBefore ?? '') > APPLE_ENTRUST_CUTOFF;
    const apple = entrustLate ? no('Apple Mail does not trust Entrust VMCs issued after 2024-11-15; replace it at renewal') : { eligible: true, why: 'a VMC' };
    return { gmail: { eligible: true, why: 'a VMC: logo with the verified check mark' }, apple, yahoo };
  }
  if (grade === 'ready-cmc') {
    return { gmail: { eligible: true, why: 'a CMC: logo, without the check mark' }, apple: no('Apple Mail needs a VMC; a CMC is not accepted'), yahoo };
  }
  return { gmail: no('Gmail needs a VMC or CMC; a self-asserted logo is not shown'), apple: no('Apple Mail needs a VMC'), yahoo };
}
