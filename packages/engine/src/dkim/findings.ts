/**
 * The findings a DKIM probe produces. Ids are an API: `dkim-found` keeps the reference service's
 * meaning; `dkim-not-found` replaces its `dkim-note` and never claims the domain has no DKIM.
 */
import { describeAnswer } from '../dns/types.js';
import type { Finding } from '../findings.js';
import { describeKey, MAX_REQUIRED_RSA_KEY_BITS, RECOMMENDED_RSA_KEY_BITS } from './parse.js';
import type { DkimKey, DkimProbe } from './types.js';

/** How many failed or rejected selectors a finding names before summarising the rest. */
export const MAX_SELECTORS_NAMED = 10;

/** The findings for a finished probe: one group per key found, then the probe-wide ones. */
export function dkimFindings(
  probe: Omit<DkimProbe, 'findings'>,
  context: { multipleRecordSelectors: readonly string[]; domainProblem?: string | undefined; nameMissing?: boolean },
): Finding[] {
  const findings: Finding[] = [];
  if (context.nameMissing) {
    // RFC 8020 §2: nothing exists below a name that does not exist, so no selector was asked for.
    return [
      {
        id: 'dkim-not-found',
        severity: 'info',
        title: 'No DKIM Key: the Name Does Not Exist',
        detail: `${probe.domain} does not exist (NXDOMAIN), so no DKIM key can be published under it (RFC 8020): no selector was looked up.`,
      },
    ];
  }
  for (const key of probe.found) findings.push(...keyFindings(key));

  for (const selector of context.multipleRecordSelectors) {
    const count = probe.found.filter((key) => key.selector === selector).length;
    findings.push({
      id: 'dkim-multiple-records',
      severity: 'warning',
      title: `Several DKIM Records (Selector: '${selector}')`,
      detail: `The selector '${selector}' has ${count} TXT records that look like DKIM keys. RFC 6376 §3.6.2.2 leaves the result undefined, and some receivers fail every signature made with this selector. Keep exactly one key record per selector.`,
    });
  }

  for (const alias of probe.dangling) {
    const via = alias.provider ? ` If you send through ${alias.provider}, turn on DKIM signing there.` : '';
    findings.push({
      id: 'dkim-cname-dangling',
      severity: 'info',
      title: `DKIM Selector Points Nowhere (Selector: '${alias.selector}')`,
      detail: `The selector '${alias.selector}' is an alias (CNAME) of ${alias.cnameTarget}, which publishes no DKIM key, so signatures made with this selector cannot be verified.${via} If you no longer use it, remove the record.`,
    });
  }

  for (const rejection of probe.rejected) {
    findings.push({
      id: 'dkim-selector-invalid',
      severity: 'warning',
      title: `Selector Not Checked ('${rejection.selector}')`,
      detail: `We did not look up the selector '${rejection.selector}': ${rejection.reason}.`,
    });
  }

  if (probe.failed.length > 0) {
    const named = probe.failed.slice(0, MAX_SELECTORS_NAMED).map((failure) => `'${failure.selector}' (${describeAnswer({ kind: 'error', reason: failure.reason })})`);
    const more = probe.failed.length > MAX_SELECTORS_NAMED ? ` and ${probe.failed.length - MAX_SELECTORS_NAMED} more` : '';
    findings.push({
      id: 'dkim-probe-failed',
      severity: 'info',
      title: `DKIM Check Incomplete (${probe.failed.length} of ${probe.probed} selectors)`,
      detail: `The DNS lookups failed for ${named.join(', ')}${more}. We could not check whether a DKIM key is published under ${probe.failed.length === 1 ? 'that selector' : 'those selectors'}; this is not the same as having none. Try again later.`,
    });
  }

  if (probe.found.length === 0) {
    const answered = probe.probed - probe.failed.length;
    if (probe.probed === 0) {
      findings.push({
        id: 'dkim-probe-failed',
        severity: 'info',
        title: 'DKIM Not Checked',
        detail: context.domainProblem
          ? `We could not check for DKIM keys because ${context.domainProblem}.`
          : 'No selector could be looked up, so we could not check for DKIM keys. See the other findings for why.',
      });
    } else {
      const among = probe.failed.length > 0 ? `among the ${answered} selectors that answered (of ${probe.probed} probed)` : `among the ${probe.probed} selectors probed`;
      findings.push({
        id: 'dkim-not-found',
        severity: 'info',
        title: 'No DKIM Key Found Among Common Selectors',
        detail: `No DKIM key found ${among}. This does not mean you have no DKIM: your provider may use a custom selector. Pass it with --selectors (CLI) or 'selectors' (API); the s= tag of the DKIM-Signature header in a message you sent shows it.`,
      });
    }
  }
  return findings;
}

/** The findings for one key record. */
function keyFindings(key: DkimKey): Finding[] {
  const findings: Finding[] = [];
  const at = `selector '${key.selector}'`;
  const outcome = key.outcome;
  switch (outcome.status) {
    case 'valid': {
      const record = outcome.record;
      const hosted = key.provider ? (key.providerEvidence === 'cname' ? `, hosted by ${key.provider}` : `; the selector name suggests ${key.provider}`) : '';
      findings.push({
        id: 'dkim-found',
        severity: 'info',
        title: `DKIM Public Key Found (Selector: '${key.selector}')`,
        detail: `${describeKey(record.key)}${hosted}.`,
      });
      if (record.key.type === 'rsa' && record.key.bits < RECOMMENDED_RSA_KEY_BITS) {
        findings.push({
          id: 'dkim-weak-key',
          severity: 'warning',
          title: `Weak DKIM Key (Selector: '${key.selector}')`,
          detail: `Your DKIM key at ${at} is a ${record.key.bits}-bit RSA key. Receivers still accept it, but RFC 8301 §3.2 asks signers for at least ${RECOMMENDED_RSA_KEY_BITS} bits. Generate a ${RECOMMENDED_RSA_KEY_BITS}-bit key and publish it under a new selector.`,
        });
      }
      if (record.key.type === 'rsa' && record.key.bits > MAX_REQUIRED_RSA_KEY_BITS) {
        findings.push({
          id: 'dkim-key-oversized',
          severity: 'info',
          title: `Very Large DKIM Key (Selector: '${key.selector}')`,
          detail: `Your DKIM key at ${at} is a ${record.key.bits}-bit RSA key. Receivers are only required to verify keys up to ${MAX_REQUIRED_RSA_KEY_BITS} bits (RFC 8301 §3.2), so some may not verify your signatures. ${RECOMMENDED_RSA_KEY_BITS} bits is enough.`,
        });
      }
      if (record.testing) {
        findings.push({
          id: 'dkim-testing',
          severity: 'warning',
          title: `DKIM Key in Testing Mode (Selector: '${key.selector}')`,
          detail: `Your DKIM key at ${at} has 't=y' (testing). Receivers may treat mail signed with it like unsigned mail even when the signature verifies (RFC 6376 §3.6.1). Remove 't=y' once signing works.`,
        });
      }
      if (record.acceptedHashes !== null && !record.acceptedHashes.includes('sha256')) {
        findings.push(hashFinding(key.selector, record.acceptedHashes.length > 0, record.hashNames ?? []));
      }
      break;
    }
    case 'too-short':
      findings.push({
        id: 'dkim-key-too-short',
        severity: 'warning',
        title: `DKIM Key Too Short (Selector: '${key.selector}')`,
        detail: `Your DKIM key at ${at} is a ${outcome.record.key.bits}-bit RSA key. Receivers must ignore RSA keys under 1024 bits (RFC 8301 §3.2), so mail signed with it counts as unsigned. Publish a ${RECOMMENDED_RSA_KEY_BITS}-bit key under a new selector and sign with it.`,
      });
      break;
    case 'revoked':
      findings.push({
        id: 'dkim-key-revoked',
        severity: 'info',
        title: `DKIM Key Revoked (Selector: '${key.selector}')`,
        detail: `The ${at} publishes an empty key ('p='), which means the key is revoked (RFC 6376 §3.6.1). That is normal for a retired selector, but any mail still signed with it fails DKIM.`,
      });
      break;
    default:
      findings.push({
        id: 'dkim-invalid-key',
        severity: 'warning',
        title: `Unusable DKIM Record (Selector: '${key.selector}')`,
        detail: `The DKIM record at ${at} cannot be used: ${outcome.reason} Signatures made with this selector will fail.`,
      });
  }
  const syntaxNotes = 'record' in outcome ? outcome.record.syntaxNotes : 'tags' in outcome ? outcome.tags.syntaxNotes : [];
  if (syntaxNotes.length > 0) {
    findings.push({
      id: 'dkim-record-nonstandard',
      severity: 'info',
      title: `DKIM Record Syntax Is Loose (Selector: '${key.selector}')`,
      detail: `Your DKIM record at ${at} is accepted by most receivers, but strict ones may reject it. ${syntaxNotes.join(' ')}`,
    });
  }
  return findings;
}

/** `h=` without sha256: sha1 only (RFC 8301 §3.1 forbids it), or no hash a verifier knows. */
function hashFinding(selector: string, hasSha1: boolean, hashNames: readonly string[]): Finding {
  const caseSlip = hashNames.find((name) => name !== 'sha256' && name.toLowerCase() === 'sha256');
  const caseNote = caseSlip ? ` The record lists '${caseSlip}', but h= values are case-sensitive (RFC 6376 §3.2): write 'sha256'.` : '';
  if (hasSha1) {
    return {
      id: 'dkim-sha1-only',
      severity: 'warning',
      title: `DKIM Key Allows Only SHA-1 (Selector: '${selector}')`,
      detail: `Your DKIM key at selector '${selector}' has 'h=' allowing only SHA-1. RFC 8301 §3.1 forbids rsa-sha1, so receivers reject those signatures, and SHA-256 signatures fail against this key.${caseNote} Remove the 'h=' tag or set 'h=sha256'.`,
    };
  }
  return {
    id: 'dkim-hash-unusable',
    severity: 'warning',
    title: `DKIM Key Allows No Known Hash (Selector: '${selector}')`,
    detail: `Your DKIM key at selector '${selector}' has 'h=${hashNames.join(':')}', which names no hash algorithm receivers use, so no signature can verify against it (RFC 6376 §6.1.2).${caseNote} Remove the 'h=' tag or set 'h=sha256'.`,
  };
}
