/**
 * Shared set-up of the alert tests: a throw-away CA and a relay certificate (made with `openssl`;
 * missing openssl FAILS the set-up with a message), a local SMTP relay (smtp-server) that offers
 * STARTTLS with that certificate and takes AUTH only after it, and a lookup that sends the test
 * names to 127.0.0.1.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import type { HostLookup } from '@spoof-checker/engine';

/** The relay's name (its certificate's), resolved to loopback by {@link loopbackLookup}. */
export const RELAY_HOST = 'relay.alerts.test';
export const RELAY_USER = 'alerts';
export const RELAY_PASSWORD = 'correct horse battery staple';

/** Every name resolves to 127.0.0.1 (the receivers and the relay all listen there). */
export const loopbackLookup: HostLookup = async () => [{ address: '127.0.0.1', family: 4 }];

function openssl(args: string[], cwd: string): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error('The alert tests need the openssl command (Debian package "openssl"); it is not installed.');
    throw new Error(`openssl ${args.join(' ')} failed: ${String((error as { stderr?: Buffer }).stderr ?? error)}`);
  }
}

/** A test CA and a leaf for {@link RELAY_HOST} signed by it. */
export function makeRelayCertificates(): { caPem: string; key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'alerts-ca-'));
  try {
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    openssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=alerts test CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
    writeFileSync(join(dir, 'leaf.ext'), `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:${RELAY_HOST}\n`);
    openssl(['req', ...ec, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', `/CN=${RELAY_HOST}`], dir);
    openssl(['x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'leaf.pem', '-days', '2', '-extfile', 'leaf.ext'], dir);
    return { caPem: readFileSync(join(dir, 'ca.pem'), 'utf8'), key: readFileSync(join(dir, 'leaf.key'), 'utf8'), cert: readFileSync(join(dir, 'leaf.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One mail the relay took. */
export interface RelayedMail {
  from: string;
  to: string[];
  /** The session was under TLS (STARTTLS) when the mail came. */
  secure: boolean;
  user: string | undefined;
  parsed: ParsedMail;
  receivedAt: number;
}

/** A local SMTP relay on 127.0.0.1: STARTTLS with the test certificate, AUTH (PLAIN/LOGIN) only under TLS. */
export async function startRelay(certs: { key: string; cert: string }): Promise<{ port: number; mails: RelayedMail[]; close: () => Promise<void> }> {
  const mails: RelayedMail[] = [];
  const server = new SMTPServer({
    key: certs.key,
    cert: certs.cert,
    authMethods: ['PLAIN', 'LOGIN'],
    // smtp-server refuses AUTH before STARTTLS unless told otherwise: a password never goes in clear.
    allowInsecureAuth: false,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === RELAY_USER && auth.password === RELAY_PASSWORD) return callback(null, { user: auth.username });
      return callback(new Error('535 5.7.8 bad credentials'));
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((parsed) => {
          mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            secure: session.secure,
            user: session.user as string | undefined,
            parsed,
            receivedAt: Date.now(),
          });
          callback();
        })
        .catch((error: Error) => callback(error));
    },
  });
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return { port, mails, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** One request an HTTP receiver got. */
export interface ReceivedRequest {
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** An HTTP receiver on 127.0.0.1 (Slack, Teams, webhooks): answers `status` (200) and records each request with its path. */
export async function startReceiver(): Promise<{ url: string; received: ReceivedRequest[]; setStatus: (s: number) => void; close: () => Promise<void> }> {
  const received: ReceivedRequest[] = [];
  let status = 200;
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ url: req.url ?? '', headers: req.headers, body });
      res.writeHead(status).end(status < 300 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    setStatus: (s) => (status = s),
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** Waits until `done()` holds, checking every 20 ms, for at most `ms` (then fails with `what`). */
export async function waitFor(done: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const until = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
