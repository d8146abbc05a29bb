/** DANE for SMTP: TLSA matching against the chain an MX sent (RFC 7672, RFC 7671, RFC 6698). */
export type { DaneMatch, DaneOutcome, RolloverScheme, TlsaRecord } from './types.js';
export { associationData, formatTlsa, isUsable, MAX_CHAIN_CERTIFICATES, matchTlsa, parseTlsaRdata, rolloverScheme } from './match.js';
export { chainAsSent } from './handshake.js';
