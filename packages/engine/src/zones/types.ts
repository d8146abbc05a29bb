import type { RecordData, RecordType } from '../dns/types.js';

/**
 * The in-memory form of an RFC 1035 §5 master file. Names are absolute, lower case and carry no
 * trailing dot ('' is the root), the same canonical form the resolvers use as keys.
 */
export interface ResourceRecord<T extends RecordType = RecordType> {
  name: string;
  type: T;
  ttl: number;
  data: RecordData<T>;
}

/**
 * A record of a type the checks do not read (CAA, TLSA, DS, RRSIG, SVCB…, or an unknown `TYPEnnn`):
 * kept so that a real zone export loads whole, its RDATA in uncompressed wire form (RFC 3597 §5).
 */
export interface OtherRecord {
  name: string;
  /** The mnemonic (`TLSA`), or `TYPEnnn` for a type without one. */
  type: string;
  /** The type code (RFC 6895 §3.1). */
  code: number;
  ttl: number;
  rdata: Uint8Array;
}

/** One zone: its origin (apex) and every record at or below it. */
export interface Zone {
  origin: string;
  /** The records of the types the checks read (`RecordType`). */
  records: ResourceRecord[];
  /** The records of every other type, when the file holds any. */
  otherRecords?: OtherRecord[];
  /** Where it was loaded from, for messages. */
  source?: string;
}
