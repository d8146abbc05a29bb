/**
 * The demo's own mail servers, so that "Mail sent to you" has something real to answer in
 * `serve --demo`: an SMTP responder that offers STARTTLS (127.0.0.2), one that does not
 * (127.0.0.3), and an HTTPS host for the MTA-STS policies (127.0.0.4), all on loopback, with the
 * demo's test authority (fixtures/demo-transport/, made by scripts/make-demo-transport-certs.sh).
 * The zones in fixtures/demo-transport/zones/ point four demo domains at them, one per transport
 * verdict: enforced, opportunistic (a testing policy), broken (a certificate for another name) and
 * at-risk (no STARTTLS).
 *
 * Only these domains are probed with private addresses allowed, and only with the demo authority
 * trusted: every other demo domain keeps the usual guard, so the demo never connects to the
 * documentation addresses its other fixtures use.
 */
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import { createSecureContext, TLSSocket, type SecureContext } from 'node:tls';
import { join } from 'node:path';
import { FIXTURE_ZONES_DIR } from '../fixtures.js';
import { loadZoneDirectory, loadZoneFile, normaliseDomainInput, TransportCache, type CheckTransportOptions, type Zone } from '@spoof-checker/engine';

const ROOT = new URL('../../fixtures/demo-transport/', import.meta.url);
/** The demo transport zones (one per verdict). */
export const DEMO_TRANSPORT_ZONES_DIR = new URL('zones/', ROOT).pathname;

/** Where the demo's responders listen: loopback addresses the demo transport zones name. */
export const DEMO_SMTP_STARTTLS_ADDRESS = '127.0.0.2';
export const DEMO_SMTP_PLAIN_ADDRESS = '127.0.0.3';
export const DEMO_POLICY_HOST_ADDRESS = '127.0.0.4';
/** Longest command line a responder reads (RFC 5321 §4.5.3.1.4: 512 octets). */
const MAX_COMMAND_BYTES = 512;
/** A demo connection is closed after this long, whatever the client does. */
const CONNECTION_DEADLINE_MS = 15_000;
/** Tries at binding the three servers on one free port. */
const BIND_ATTEMPTS = 5;

/** The demo transport domains, what each shows, and the policy its host serves. */
export const DEMO_TRANSPORT_DOMAINS: readonly { domain: string; shows: string; policy?: string }[] = [
  { domain: 'sts-enforced.example', shows: 'enforced: MTA-STS enforce and a valid certificate', policy: policyText('enforce', 'mx.sts-enforced.example') },
  { domain: 'sts-testing.example', shows: 'opportunistic: an MTA-STS policy in testing mode', policy: policyText('testing', 'mx.sts-testing.example') },
  { domain: 'sts-broken.example', shows: 'broken: the MX presents a certificate for another name', policy: policyText('enforce', 'mx.sts-broken.example') },
  { domain: 'sts-none.example', shows: 'at-risk: no MTA-STS, and the MX offers no STARTTLS' },
  // DANE (RFC 7672): its zone is a DNSSEC demo zone (fixtures/zones/, signed in fixtures/demo-dnssec/).
  { domain: 'dnssec-secure.example', shows: 'DANE: a DNSSEC-signed TLSA record on the MX matches its certificate' },
  // BIMI: its logo host is the demo's HTTPS host; the logo and the VMC are fixtures/demo-bimi/'s.
  { domain: 'brand.example', shows: 'BIMI: a brand logo and a VMC from the demo Mark Verifying Authority' },
];
/** The demo's BIMI material (scripts/make-demo-bimi.sh): nothing but the demo trusts its authorities. */
const BIMI_ROOT = new URL('../../fixtures/demo-bimi/', import.meta.url);
/** The host the demo BIMI domain's logo and certificate are served from. */
export const DEMO_BIMI_HOST = 'bimi.brand.example';
/** How the page names the demo's Mark Verifying Authority (its certificate's common name). */
export const DEMO_MARK_AUTHORITY = 'spoof-checker demo Mark Verifying Authority (not for real use)';
/** The demo transport domains whose zone file is one of the fixture zones (the DNSSEC demo's), not in DEMO_TRANSPORT_ZONES_DIR. */
const FIXTURE_ZONE_TRANSPORT_FILES = ['dnssec-secure.example.zone'];

function policyText(mode: 'enforce' | 'testing', mx: string): string {
  // RFC 8461 §3.2: version, mode, mx, max_age.
  return `version: STSv1\r\nmode: ${mode}\r\nmx: ${mx}\r\nmax_age: 604800\r\n`;
}

/** The running demo responders. */
export interface DemoTransport {
  /** The zones to add to the demo's resolver. */
  zones: Zone[];
  /** The domains whose transport check answers from the demo's responders. */
  domains: ReadonlySet<string>;
  /** The transport options for those domains: the demo authority trusted, loopback allowed, the demo's ports. */
  options: CheckTransportOptions;
  /** The demo Mark Verifying Authority's root (PEM), trusted for BIMI on those domains only. */
  bimiRoots: string;
  stop(): Promise<void>;
}

/** Starts the demo's SMTP responders and policy host on loopback. */
export async function startDemoTransport(): Promise<DemoTransport> {
  const read = (name: string) => readFileSync(new URL(name, ROOT), 'utf8');
  const readBimi = (name: string) => readFileSync(new URL(name, BIMI_ROOT), 'utf8');
  // The demo authority of the transport probes, and the demo web authority of the BIMI logo host.
  const ca = read('ca.pem') + readBimi('web-ca.pem');
  const bimiHost = createSecureContext({ key: readBimi('host.key'), cert: readBimi('host.pem') });
  const bimiFiles = new Map([
    ['/logo.svg', { type: 'image/svg+xml', body: readBimi('logo.svg') }],
    ['/vmc.pem', { type: 'application/pem-certificate-chain', body: readBimi('vmc.pem') }],
  ]);
  const good = createSecureContext({ key: read('good.key'), cert: read('good.pem') });
  const wrong = createSecureContext({ key: read('wrong.key'), cert: read('wrong.pem') });
  // The broken domain's MX presents a certificate for another name; every other name gets the good one.
  const contextFor = (name: string): SecureContext => (name.toLowerCase() === 'mx.sts-broken.example' ? wrong : name.toLowerCase() === DEMO_BIMI_HOST ? bimiHost : good);

  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.setTimeout(CONNECTION_DEADLINE_MS, () => socket.destroy());
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  };
  const starttls = createNetServer((socket) => smtpSession(socket, { starttls: true, contextFor, track }));
  const plain = createNetServer((socket) => smtpSession(socket, { starttls: false, contextFor, track }));
  const policies = new Map(DEMO_TRANSPORT_DOMAINS.filter((d) => d.policy).map((d) => [`mta-sts.${d.domain}`, d.policy!]));
  const https: HttpsServer = createHttpsServer({ SNICallback: (name, cb) => cb(null, contextFor(name)), key: read('good.key'), cert: read('good.pem') }, (request, response) => {
    const host = (request.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
    const policy = policies.get(host);
    const bimiFile = host === DEMO_BIMI_HOST ? bimiFiles.get(request.url ?? '') : undefined;
    if (bimiFile) {
      response.writeHead(200, { 'content-type': bimiFile.type }).end(bimiFile.body);
      return;
    }
    if (request.url !== '/.well-known/mta-sts.txt' || policy === undefined) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('no such policy');
      return;
    }
    response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(policy);
  });
  https.on('connection', track);
  https.on('tlsClientError', () => undefined);

  const ports = await bindAll([
    [starttls, DEMO_SMTP_STARTTLS_ADDRESS],
    [plain, DEMO_SMTP_PLAIN_ADDRESS],
  ]);
  await listen(https, 0, DEMO_POLICY_HOST_ADDRESS);
  const httpsPort = (https.address() as { port: number }).port;
  const zones = [
    ...(await loadZoneDirectory(DEMO_TRANSPORT_ZONES_DIR)),
    ...(await Promise.all(FIXTURE_ZONE_TRANSPORT_FILES.map((file) => loadZoneFile(join(FIXTURE_ZONES_DIR, file))))),
  ];

  return {
    zones,
    domains: new Set(DEMO_TRANSPORT_DOMAINS.map((d) => d.domain)),
    options: { cache: new TransportCache(), tlsCa: ca, connectPorts: { smtp: ports, https: httpsPort }, allowPrivateAddresses: true },
    bimiRoots: readBimi('mva-root.pem'),
    async stop() {
      for (const socket of sockets) socket.destroy();
      await Promise.all([starttls, plain, https].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    },
  };
}

/** Binds every server on one port (the probe connects to one SMTP port on every address): the first takes a free one. */
async function bindAll(servers: [Server, string][]): Promise<number> {
  let lastError: unknown;
  for (let attempt = 0; attempt < BIND_ATTEMPTS; attempt++) {
    const [[first, firstAddress], ...rest] = servers as [[Server, string], ...[Server, string][]];
    await listen(first, 0, firstAddress);
    const port = (first.address() as { port: number }).port;
    try {
      for (const [server, address] of rest) await listen(server, port, address);
      return port;
    } catch (error) {
      // Someone holds that port on another demo address: close what was bound and try another.
      lastError = error;
      await Promise.all(servers.map(([server]) => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()))));
    }
  }
  throw new Error(`the demo's SMTP responders could not bind one port on ${servers.map(([, a]) => a).join(' and ')}: ${String(lastError)}`);
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/**
 * One SMTP session as far as a transport probe goes (RFC 5321 §4.1, RFC 3207): the greeting, EHLO
 * (with STARTTLS when offered), STARTTLS and the handshake, EHLO again, QUIT. Anything else is
 * answered 502: the demo accepts no mail.
 */
function smtpSession(socket: Socket, options: { starttls: boolean; contextFor: (name: string) => SecureContext; track: (s: Socket) => void }): void {
  options.track(socket);
  let stream: Socket = socket;
  let secure = false;
  let buffer = '';
  const reply = (text: string) => stream.write(`${text}\r\n`);
  const onData = (chunk: Buffer) => {
    buffer += chunk.toString('latin1');
    if (buffer.length > MAX_COMMAND_BYTES && !buffer.includes('\n')) {
      reply('500 5.5.2 line too long');
      stream.destroy();
      return;
    }
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, '');
      buffer = buffer.slice(newline + 1);
      const verb = line.split(' ')[0]!.toUpperCase();
      if (verb === 'EHLO' || verb === 'HELO') {
        const offers = options.starttls && !secure ? ['STARTTLS'] : [];
        const lines = ['demo.spoof-checker greets you', ...offers, '8BITMIME'];
        reply(lines.map((text, i) => `250${i < lines.length - 1 ? '-' : ' '}${text}`).join('\r\n'));
      } else if (verb === 'STARTTLS' && options.starttls && !secure) {
        reply('220 2.0.0 ready to start TLS');
        socket.off('data', onData);
        buffer = '';
        const tls = new TLSSocket(socket, { isServer: true, SNICallback: (name, cb) => cb(null, options.contextFor(name)), secureContext: options.contextFor('') });
        tls.on('error', () => socket.destroy());
        tls.on('data', onData);
        stream = tls;
        secure = true;
      } else if (verb === 'QUIT') {
        reply('221 2.0.0 bye');
        stream.end();
      } else {
        reply('502 5.5.1 this demo server accepts no mail');
      }
    }
  };
  socket.on('data', onData);
  reply('220 demo.spoof-checker ESMTP (the spoof-checker demo: accepts no mail)');
}

/** Whether `input` (a domain, URL or address) names one of the demo transport domains. */
export function isDemoTransportDomain(demo: Pick<DemoTransport, 'domains'>, input: string): boolean {
  const normalised = normaliseDomainInput(input);
  return normalised.ok && demo.domains.has(normalised.domain);
}
