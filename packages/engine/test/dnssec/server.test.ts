/**
 * The embedded server serving signed zones, on the wire (RFC 4035 §3): RRSIGs only with DO, DS from
 * the parent's side of a cut, referrals with the DS or its NSEC denial and without AA, NXDOMAIN with
 * the NSEC proofs, CD copied and AD never set, TC over UDP when the signed answer does not fit the
 * client's buffer and the whole answer over TCP.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningDnsServer } from '../../src/zones/server.js';
import { createRawQuery } from '../../src/dnssec/query.js';
import { encodeRawQuery, readRawMessage, TYPE, type RawMessage } from '../../src/dns/canonical.js';
import { startSignedServer } from './helpers.js';

let server: RunningDnsServer;
beforeAll(async () => {
  server = await startSignedServer();
});
afterAll(async () => {
  await server?.close();
});

/** One UDP exchange with the flags and buffer asked for. */
async function udp(name: string, type: number, options: { do: boolean; cd: boolean; udpPayload: number }): Promise<RawMessage> {
  const socket = dgram.createSocket('udp4');
  const query = encodeRawQuery(4242, name, type, { rd: false, ...options });
  const answer = new Promise<Buffer>((resolve) => socket.once('message', resolve));
  socket.send(query, server.address.port, '127.0.0.1');
  const bytes = await answer;
  socket.close();
  return readRawMessage(bytes);
}

/** One TCP exchange (RFC 7766: two-octet length prefix). */
async function tcp(name: string, type: number): Promise<RawMessage> {
  const query = encodeRawQuery(4343, name, type, { rd: false, do: true, cd: false, udpPayload: 512 });
  const socket = net.connect(server.address.port, '127.0.0.1');
  const prefix = Buffer.alloc(2);
  prefix.writeUInt16BE(query.length);
  socket.write(Buffer.concat([prefix, query]));
  let buffered = Buffer.alloc(0);
  const bytes = await new Promise<Buffer>((resolve) => {
    socket.on('data', (chunk) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) resolve(buffered.subarray(2, 2 + buffered.readUInt16BE(0)));
    });
  });
  socket.destroy();
  return readRawMessage(bytes);
}

const AA = 0x0400;
const TC = 0x0200;
const AD = 0x0020;
const CD = 0x0010;
const types = (records: RawMessage['answer']): number[] => [...new Set(records.map((r) => r.type))];

describe('signed zones on the wire', () => {
  it('RRSIGs with DO only; AA set, AD never, CD copied', async () => {
    const plain = await udp('secure-nsec.test', TYPE.MX, { do: false, cd: false, udpPayload: 1232 });
    expect(types(plain.answer)).toEqual([TYPE.MX]);
    const signed = await udp('secure-nsec.test', TYPE.MX, { do: true, cd: true, udpPayload: 1232 });
    expect(types(signed.answer)).toEqual([TYPE.MX, TYPE.RRSIG]);
    expect(signed.flags & AA).toBe(AA);
    expect(signed.flags & AD).toBe(0);
    expect(signed.flags & CD).toBe(CD);
    expect(signed.opt?.do).toBe(true);
  });

  it('DS is answered from the parent zone (RFC 4035 §3.1.4.1)', async () => {
    const ds = await udp('secure-nsec.test', TYPE.DS, { do: true, cd: false, udpPayload: 1232 });
    const sig = ds.answer.find((r) => r.type === TYPE.RRSIG);
    expect(types(ds.answer)).toEqual([TYPE.DS, TYPE.RRSIG]);
    // The signer's name (after the 18 fixed octets) is test., the parent.
    expect(sig?.rdata.subarray(18, 24).toString('latin1')).toBe('\u0004test\u0000');
  });

  it('a referral to an unsigned child: NS and the NSEC without DS, no AA', async () => {
    const referral = await udp('x.deleg.secure-nsec.test', TYPE.A, { do: true, cd: false, udpPayload: 1232 });
    expect(referral.flags & AA).toBe(0);
    expect(referral.answer).toEqual([]);
    expect(types(referral.authority)).toEqual([TYPE.NS, TYPE.NSEC, TYPE.RRSIG]);
  });

  it('NXDOMAIN with SOA, the NSEC covering the name and the one covering the wildcard, all signed', async () => {
    const nx = await udp('nope.secure-nsec.test', TYPE.A, { do: true, cd: false, udpPayload: 1232 });
    expect(nx.rcode).toBe(3);
    expect(nx.authority.filter((r) => r.type === TYPE.NSEC).length).toBe(2);
    expect(nx.authority.filter((r) => r.type === TYPE.RRSIG).length).toBe(3);
  });

  it('TC over UDP when the signed answer does not fit 512 octets; the whole answer over TCP', async () => {
    const small = await udp('', TYPE.DNSKEY, { do: true, cd: false, udpPayload: 512 });
    expect(small.flags & TC).toBe(TC);
    expect(small.answer).toEqual([]);
    const full = await tcp('', TYPE.DNSKEY);
    expect(types(full.answer)).toEqual([TYPE.DNSKEY, TYPE.RRSIG]);
    expect(full.flags & TC).toBe(0);
    // The validator's client does the same on its own: UDP, then TCP when TC is set.
    const viaClient = await createRawQuery([server.address])('alg8.test', TYPE.DNSKEY);
    expect(viaClient.kind === 'response' && types(viaClient.message.answer)).toEqual([TYPE.DNSKEY, TYPE.RRSIG]);
  });
});
