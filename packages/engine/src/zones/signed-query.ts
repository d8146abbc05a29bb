/**
 * The DNSSEC validator's questions answered in process from a set of signed zones, as the embedded
 * server answers them on the wire (RFC 4035 §3: with DO, every RRset with its RRSIGs, DS from the
 * parent, NSEC/NSEC3 proofs): the demo validates its signed demo domains from the demo's own trust
 * anchor (fixtures/demo-dnssec/) without sending a packet anywhere, not even to loopback.
 */
import type { RawQuery, RawResponse } from '../dnssec/types.js';
import type { SignedZoneSet } from './signed.js';
import { CLASS_IN, FLAG, RCODE } from '../dns/wire.js';
import { EDNS_UDP_PAYLOAD } from '../dns/network-resolver.js';

/** RFC 1035 §4.1.1: REFUSED, for a name no signed zone holds (as an authoritative server answers). */
export const RCODE_REFUSED = RCODE.REFUSED;

/** A `RawQuery` answered from `zones`, with no network; a name outside them is REFUSED. */
export function signedZoneQuery(zones: SignedZoneSet): RawQuery {
  return async (name, type): Promise<RawResponse> => {
    const qname = name.toLowerCase().replace(/\.$/, '');
    const answer = zones.answer(qname, type, true);
    const question = { name: qname, type, class: CLASS_IN };
    // QR, RFC 4035 §3.1.6 AA; RD and CD copied from the validator's question (RFC 6840 §5.9).
    const opt = { udpPayloadSize: EDNS_UDP_PAYLOAD, version: 0, do: true };
    if (!answer) {
      return { kind: 'response', message: { id: 0, flags: FLAG.QR | FLAG.RD | FLAG.CD, rcode: RCODE_REFUSED, question, answer: [], authority: [], additional: [], opt } };
    }
    const flags = FLAG.QR | FLAG.RD | FLAG.CD | (answer.authoritative ? FLAG.AA : 0);
    return { kind: 'response', message: { id: 0, flags, rcode: answer.rcode, question, answer: answer.answer, authority: answer.authority, additional: [], opt } };
  };
}
