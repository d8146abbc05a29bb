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

/** One zone: its origin (apex) and every record at or below it. */
export interface Zone {
  origin: string;
  records: ResourceRecord[];
  /** Where it was loaded from, for messages. */
  source?: string;
}
