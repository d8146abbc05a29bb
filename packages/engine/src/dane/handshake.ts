/**
 * The certificate chain an SMTP server sends after STARTTLS (RFC 3207), exactly as sent: DANE-TA
 * matching must not see certificates the client's own trust store added (RFC 7672 §3.1.2). Node's
 * `getPeerCertificate(true)` completes the chain from the context's trust store, so this handshake
 * trusts only a placeholder certificate that signs nothing: what it returns is what the server sent.
 *
 * It connects where it is told: callers apply the address guard first (the transport check does).
 */
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type DetailedPeerCertificate, type TLSSocket } from 'node:tls';
import { command, offersStarttls, replyReader } from '../net/smtp-session.js';
import { describeError, guarded, oneOutcome } from '../net/socket-errors.js';
import { MAX_CHAIN_CERTIFICATES } from './match.js';

/** How long the whole exchange may take. */
export const CHAIN_DEADLINE_MS = 10_000;

/** A self-signed placeholder that signs nothing (it keeps Node from completing chains from its store). */
const PLACEHOLDER_CA = `-----BEGIN CERTIFICATE-----
MIIBpzCCAVmgAwIBAgIUcBYWDmrfyNX3DlEp0xaiQdmf3vIwBQYDK2VwMEgxRjBE
BgNVBAMMPXNwb29mLWNoZWNrZXIgREFORSBjaGFpbi1hcy1zZW50IHBsYWNlaG9s
ZGVyICh0cnVzdHMgbm90aGluZykwIBcNMjYxMTI3MTYxMzAzWhgPMjEyNjExMDMx
NjEzMDNaMEgxRjBEBgNVBAMMPXNwb29mLWNoZWNrZXIgREFORSBjaGFpbi1hcy1z
ZW50IHBsYWNlaG9sZGVyICh0cnVzdHMgbm90aGluZykwKjAFBgMrZXADIQDSbnzQ
nF3XNcAaBwMqfXePt+RsXIrX6nw561hMn0fUYKNTMFEwHQYDVR0OBBYEFHe3tSad
TU/BirGA9twJKd4ROGfBMB8GA1UdIwQYMBaAFHe3tSadTU/BirGA9twJKd4ROGfB
MA8GA1UdEwEB/wQFMAMBAf8wBQYDK2VwA0EA6E5JVqkvIgWihftdqaooiFXy9mU+
UeEF5cG0x+SoJPSUYAyFHY4OsDUj92r/d2MKXLafZ+yE7N6rMnTzlCQlAw==
-----END CERTIFICATE-----
-----END CERTIFICATE-----
`;

/** The chain as sent (DER, leaf first), or why there is none. */
export type ChainAsSent = { ok: true; chain: Buffer[] } | { ok: false; stage: 'connect' | 'smtp' | 'no-starttls' | 'tls'; detail: string };

/** EHLO, STARTTLS, then a TLS handshake with SNI `servername` (RFC 7672 §8.1); the chain the server sent. */
export function chainAsSent(address: string, port: number, servername: string, options: { timeoutMs?: number; ehloName?: string } = {}): Promise<ChainAsSent> {
  return new Promise((resolve) => {
    let step: 'greeting' | 'ehlo' | 'starttls' | 'tls' = 'greeting';
    let socket: Socket | null = null;
    const outcome = oneOutcome<ChainAsSent>(resolve, () => {
      clearTimeout(timer);
      socket?.destroy();
    });
    const finish = (result: ChainAsSent): void => outcome.settle(result);
    const timer = setTimeout(() => finish({ ok: false, stage: step === 'tls' ? 'tls' : 'smtp', detail: `timed out during ${step}` }), options.timeoutMs ?? CHAIN_DEADLINE_MS);
    try {
      socket = netConnect({ host: address, port });
    } catch (error) {
      // A bad port or address throws before any socket exists (ERR_SOCKET_BAD_PORT): an outcome too.
      return finish({ ok: false, stage: 'connect', detail: describeError(error) });
    }
    const open: Socket = socket;
    // A throw inside a listener would end the process: each runs within a catch.
    const broke = (error: unknown): void => finish({ ok: false, stage: step === 'tls' ? 'tls' : step === 'greeting' ? 'connect' : 'smtp', detail: describeError(error) });
    open.on('close', () => finish({ ok: false, stage: step === 'tls' ? 'tls' : step === 'greeting' ? 'connect' : 'smtp', detail: `the server closed the connection during ${step}` }));
    open.on('error', (error) => finish({ ok: false, stage: step === 'greeting' ? 'connect' : 'smtp', detail: error.message }));
    const reader = replyReader(open);
    const onSecure = (secure: TLSSocket): void => {
      const chain: Buffer[] = [];
      let cert: DetailedPeerCertificate | undefined = secure.getPeerCertificate(true);
      while (cert && cert.raw && chain.length < MAX_CHAIN_CERTIFICATES) {
        chain.push(Buffer.from(cert.raw));
        if (!cert.issuerCertificate || cert.issuerCertificate === cert || cert.issuerCertificate.raw?.equals(cert.raw)) break;
        cert = cert.issuerCertificate;
      }
      secure.end('QUIT\r\n');
      finish(chain.length > 0 ? { ok: true, chain } : { ok: false, stage: 'tls', detail: 'the server sent no certificate' });
    };
    // The SMTP session of ../net/smtp-session.ts; a null reply is a connection that ended (the close handler says so).
    void (async () => {
      const greeting = await reader.next();
      if (greeting === null || outcome.settled) return;
      if (greeting.code !== 220) return finish({ ok: false, stage: 'smtp', detail: `greeting ${greeting.code}` });
      step = 'ehlo';
      const ehlo = await command(open, reader, `EHLO ${options.ehloName ?? 'spoof-checker.invalid'}`);
      if (ehlo === null || outcome.settled) return;
      if (!offersStarttls(ehlo)) return finish({ ok: false, stage: 'no-starttls', detail: 'the server does not offer STARTTLS' });
      step = 'starttls';
      const ready = await command(open, reader, 'STARTTLS');
      if (ready === null || outcome.settled) return;
      if (ready.code !== 220) return finish({ ok: false, stage: 'no-starttls', detail: `STARTTLS answered ${ready.code}` });
      step = 'tls';
      reader.detach();
      const secure = tlsConnect({ socket: open, servername, ca: [PLACEHOLDER_CA], rejectUnauthorized: false, checkServerIdentity: () => undefined, minVersion: 'TLSv1.2' });
      secure.on('error', (error) => finish({ ok: false, stage: 'tls', detail: error.message }));
      secure.on('close', () => finish({ ok: false, stage: 'tls', detail: 'the server closed the connection during the TLS handshake' }));
      secure.once('secureConnect', guarded(() => onSecure(secure), broke));
    })().catch(broke);
  });
}
