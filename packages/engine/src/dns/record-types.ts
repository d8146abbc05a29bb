/**
 * The one table of DNS record types, mnemonic ↔ code (RFC 1035 §3.2.2 and §3.2.3, RFC 3596 §2.1,
 * RFC 4034 §2–§4, RFC 5155 §3–§4, RFC 6698 §2, RFC 6891 §6.1.1, the RFC 6895 §3.1 registry), and its
 * `TYPEnnn` form for a type with no mnemonic (RFC 3597 §5). The wire codec (wire.ts), the DNSSEC
 * codec (canonical.ts), the zone-file readers (zones/) and the validator all name types from here.
 */

/** Every data type with a mnemonic the engine reads or writes, by its IANA code. */
export const RECORD_TYPE_CODES = {
  // the types the checks read (`RecordType`)
  A: 1, NS: 2, CNAME: 5, SOA: 6, PTR: 12, MX: 15, TXT: 16, AAAA: 28,
  // types with a presentation reader in zones/rdata.ts
  HINFO: 13, SRV: 33, NAPTR: 35, DNAME: 39, DS: 43, SSHFP: 44, RRSIG: 46, NSEC: 47, DNSKEY: 48,
  NSEC3: 50, NSEC3PARAM: 51, TLSA: 52, SMIMEA: 53, CDS: 59, CDNSKEY: 60, OPENPGPKEY: 61, SVCB: 64,
  HTTPS: 65, URI: 256, CAA: 257,
  // registered types read only in the RFC 3597 `\#` form
  MD: 3, MF: 4, MB: 7, MG: 8, MR: 9, NULL: 10, WKS: 11, MINFO: 14, RP: 17, AFSDB: 18, X25: 19, RT: 21,
  NSAP: 22, SIG: 24, KEY: 25, LOC: 29, KX: 36, CERT: 37, APL: 42, IPSECKEY: 45, DHCID: 49, HIP: 55,
  CSYNC: 62, ZONEMD: 63, EUI48: 108, EUI64: 109, DLV: 32769,
} as const;

/** RFC 6891 §6.1.1 OPT and RFC 1035 §3.2.3 QTYPE * (ANY): named, but never a zone's data. */
export const META_TYPE_CODES = { OPT: 41, ANY: 255 } as const;

/** A mnemonic of the table. */
export type TypeMnemonic = keyof typeof RECORD_TYPE_CODES | keyof typeof META_TYPE_CODES;

/** RFC 1035 §3.2.1: TYPE is a 16-bit field. */
export const MAX_TYPE_CODE = 65_535;

const NAME_BY_CODE: ReadonlyMap<number, string> = new Map(
  [...Object.entries(RECORD_TYPE_CODES), ...Object.entries(META_TYPE_CODES)].map(([name, code]) => [code, name]),
);

/** The part of the table named by `names`, as a mnemonic → code record. */
export function typeCodesOf<N extends TypeMnemonic>(names: readonly N[]): { readonly [K in N]: number } {
  const all: Readonly<Record<string, number>> = { ...RECORD_TYPE_CODES, ...META_TYPE_CODES };
  return Object.fromEntries(names.map((name) => [name, all[name]])) as { readonly [K in N]: number };
}

/** A type's mnemonic, or `TYPEnnn` (RFC 3597 §5). */
export function typeName(code: number): string {
  return NAME_BY_CODE.get(code) ?? `TYPE${code}`;
}

/** A data type's code from its mnemonic (any case) or `TYPEnnn` (RFC 3597 §5); undefined when unknown or over 16 bits. */
export function typeCode(mnemonic: string): number | undefined {
  const upper = mnemonic.toUpperCase();
  const known = (RECORD_TYPE_CODES as Readonly<Record<string, number>>)[upper];
  if (known !== undefined) return known;
  const generic = /^TYPE(\d{1,5})$/.exec(upper);
  if (!generic) return undefined;
  const code = Number(generic[1]);
  return code <= MAX_TYPE_CODE ? code : undefined;
}
