/**
 * spoof-checker: the public surface. Everything a service embedding the engine needs is exported
 * here by name; nothing else is part of the API.
 */
export type { DnsAnswer, DnsErrorReason, MxData, RecordType, Resolver, ResolverStats, SoaData } from './dns/types.js';
export type { Finding, Severity } from './findings.js';
/** Answers from zones loaded in memory, as if they were the whole DNS. */
export { ZoneResolver } from './dns/zone-resolver.js';
