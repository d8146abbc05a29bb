/**
 * BIMI (draft-brand-indicators-for-message-identification-14): `checkBimi` is the entry point; the
 * record parser, the SVG Tiny PS validator and the mark certificate check are pure and usable alone.
 */
export { APPLE_ENTRUST_CUTOFF, BIMI_EXPIRY_WARNING_DAYS, checkBimi } from './check.js';
export type { BimiOptions } from './check.js';
export { bimiDmarcEligibility } from './eligibility.js';
export { BIMI_LABEL, bimiRecordName, bimiSelectorProblem, DEFAULT_BIMI_SELECTOR, isBimiRecord, lpsMatches, normaliseLocalPart, parseBimiRecord, selectBimiRecord } from './parse.js';
export { MAX_SVG_BYTES, MAX_SVG_INFLATED_BYTES, SVG_PS_ELEMENTS, SVG_RULES, validateSvg } from './svg.js';
export { BIMI_EKU, BIMI_ROOTS_DIR, bimiRootsFromPem, checkMarkCertificate, MARK_TYPES, shippedBimiRoots } from './certificate.js';
export type { BimiRoot, MarkCertificateInput } from './certificate.js';
export { fetchBimiFile, MAX_BIMI_FETCH_BYTES, MAX_BIMI_REDIRECTS } from './fetch.js';
export type * from './types.js';
