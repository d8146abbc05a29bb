/**
 * The transport test lab, all real parts on loopback:
 * - a test certificate authority made with `openssl` in a temp dir: a valid leaf, an expired leaf,
 *   a leaf for another name, and a self-signed certificate;
 * - 127.0.0.2:P  an SMTP server (smtp-server) offering STARTTLS, its certificate chosen by SNI;
 * - 127.0.0.3:P  an SMTP server without STARTTLS;
 * - 127.0.0.4:Q  an HTTPS server for the policy hosts, certificate by SNI, answer by Host;
 * - 127.0.0.5:P  nothing (unreachable);
 * - 127.0.0.6:P  a TCP server that accepts and never says anything (a tarpit).
 * The zones in ./zones point the lab domains at these addresses. `connectPorts` reaches P and Q.
 * `openssl` missing makes the set-up FAIL with a message (never a skip).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer as createNetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext, type SecureContext } from 'node:tls';
import { SMTPServer } from 'smtp-server';
import { loadZoneDirectory } from '../../packages/engine/src/zones/load.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';

export const LAB_ZONES = new URL('./zones/', import.meta.url).pathname;
export const SMTP_TLS = '127.0.0.2';
export const SMTP_PLAIN = '127.0.0.3';
export const HTTPS_HOST = '127.0.0.4';
export const TARPIT = '127.0.0.6';

const GOOD_POLICY = (mx: string[], mode = 'enforce', maxAge = 604800): string => ['version: STSv1', `mode: ${mode}`, ...mx.map((m) => `mx: ${m}`), `max_age: ${maxAge}`, ''].join('\n');

/** What the policy host answers for each lab domain: a body (text/plain, 200) or a whole response. */
const POLICIES: Record<string, string | { status: number; type?: string; body?: string; headers?: Record<string, string> }> = {
  'enforce-ok.example': GOOD_POLICY(['mx.enforce-ok.example']),
  'wildcard-shallow.example': GOOD_POLICY(['*.wildcard-shallow.example']),
  'redirect.example': { status: 301, headers: { location: 'https://www.redirect.example/.well-known/mta-sts.txt' }, body: 'moved' },
  'two-sts.example': GOOD_POLICY(['mx.two-sts.example']),
  'unknown-fields.example': 'version: STSv1\r\nmode: enforce\r\nfuture_field: anything\r\nmx: *.unknown-fields.example\r\nmax_age: 86400\r\n',
  'testing-expired.example': GOOD_POLICY(['mx.testing-expired.example'], 'testing'),
  'wrong-name.example': GOOD_POLICY(['mx.wrong-name.example']),
  'policy-404.example': { status: 404, type: 'text/plain', body: 'not found' },
  'policy-type.example': { status: 200, type: 'text/html; charset=utf-8', body: GOOD_POLICY(['mx.policy-type.example']) },
  'policy-big.example': GOOD_POLICY(['mx.policy-big.example']) + `${'x-padding: 0123456789abcdef0123456789abcdef0123456789abcdef\n'.repeat(1200)}`,
  'policy-expired.example': GOOD_POLICY(['mx.policy-expired.example']),
  'policy-wrong-name.example': GOOD_POLICY(['mx.policy-wrong-name.example']),
  'policy-self-signed.example': GOOD_POLICY(['mx.policy-self-signed.example']),
  'enforce-two-mx.example': GOOD_POLICY(['mx1.enforce-two-mx.example', 'mx2.enforce-two-mx.example']),
  'dual-stack.example': GOOD_POLICY(['mx.dual-stack.example']),
  'slow.example': { status: 0 }, // never answered
  'sts-cname.example': GOOD_POLICY(['mx.sts-cname.example']),
};

/** The lab's domains (one zone each), but slow.example (a tarpit, for deadline tests only). */
export const LAB_DOMAINS = [
  'enforce-ok', 'wildcard-shallow', 'redirect', 'two-sts', 'unknown-fields', 'testing-expired', 'no-starttls', 'wrong-name', 'self-signed',
  'policy-404', 'policy-type', 'policy-big', 'policy-expired', 'policy-wrong-name', 'policy-self-signed',
  'tlsrpt-nosemi', 'tlsrpt-http', 'tlsrpt-two', 'tlsrpt-ext', 'unreachable', 'enforce-two-mx', 'implicit-mx', 'dual-stack', 'sts-cname',
].map((name) => `${name}.example`);

interface KeyPair {
  key: string;
  cert: string;
}

/** The running lab. */
export interface Lab {
  dir: string;
  /** PEM of the test CA (for `tlsCa` / `--tls-ca`). */
  caPem: string;
  caFile: string;
  smtpPort: number;
  httpsPort: number;
  resolver: ZoneResolver;
  /** Connections each SMTP server accepted, and requests the HTTPS server answered. */
  seen: { smtpTls: number; smtpPlain: number; https: number };
  /** `smtp=P,https=Q` for the CLI. */
  connectPortsFlag: string;
  close(): Promise<void>;
}

function openssl(args: string[], cwd: string): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? '';
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error('The transport lab needs the openssl command (Debian package "openssl"); it is not installed.');
    throw new Error(`openssl ${args.join(' ')} failed: ${stderr}`);
  }
}

/** Makes the test CA and the four leaf certificates. */
export function makeCertificates(dir: string): { ca: KeyPair; good: KeyPair; expired: KeyPair; wrong: KeyPair; self: KeyPair } {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '30', '-subj', '/CN=spoof-checker test CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
  mkdirSync(join(dir, 'newcerts'), { recursive: true });
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'serial'), '1000\n');
  writeFileSync(
    join(dir, 'ca.cnf'),
    ['[ca]', 'default_ca = lab', '[lab]', `dir = ${dir}`, 'database = $dir/index.txt', 'new_certs_dir = $dir/newcerts', 'serial = $dir/serial', 'default_md = sha256', 'policy = any', 'unique_subject = no', 'copy_extensions = none', '[any]', 'commonName = supplied', ''].join('\n'),
  );
  const names = [...LAB_DOMAINS, 'slow.example'].flatMap((d) => [d, `mx.${d}`, `mx1.${d}`, `mx2.${d}`, `a.b.${d}`, `mta-sts.${d}`]);
  const leaf = (file: string, cn: string, san: string[], dates: string[]): KeyPair => {
    writeFileSync(join(dir, `${file}.ext`), ['[ext]', 'basicConstraints = CA:FALSE', 'keyUsage = critical,digitalSignature', 'extendedKeyUsage = serverAuth', `subjectAltName = ${san.map((n) => `DNS:${n}`).join(',')}`, ''].join('\n'));
    openssl(['req', ...ec, '-keyout', `${file}.key`, '-out', `${file}.csr`, '-subj', `/CN=${cn}`], dir);
    openssl(['ca', '-batch', '-config', 'ca.cnf', '-cert', 'ca.pem', '-keyfile', 'ca.key', '-in', `${file}.csr`, '-out', `${file}.pem`, '-notext', '-extfile', `${file}.ext`, '-extensions', 'ext', ...dates], dir);
    return { key: readFileSync(join(dir, `${file}.key`), 'utf8'), cert: readFileSync(join(dir, `${file}.pem`), 'utf8') };
  };
  const good = leaf('good', 'lab good', names, ['-days', '30']);
  const expired = leaf('expired', 'lab expired', ['mx.testing-expired.example', 'mta-sts.policy-expired.example'], ['-startdate', '20200101000000Z', '-enddate', '20200201000000Z']);
  const wrong = leaf('wrong', 'mx.wrong-name.example', ['elsewhere.example'], ['-days', '30']);
  openssl(['req', '-x509', ...ec, '-keyout', 'self.key', '-out', 'self.pem', '-days', '30', '-subj', '/CN=lab self-signed', '-addext', 'subjectAltName=DNS:mx.self-signed.example,DNS:mta-sts.policy-self-signed.example'], dir);
  const self = { key: readFileSync(join(dir, 'self.key'), 'utf8'), cert: readFileSync(join(dir, 'self.pem'), 'utf8') };
  return { ca: { key: readFileSync(join(dir, 'ca.key'), 'utf8'), cert: readFileSync(join(dir, 'ca.pem'), 'utf8') }, good, expired, wrong, self };
}

function listen(server: { listen(port: number, host: string, cb: () => void): unknown; once(event: 'error', cb: (error: Error) => void): unknown }, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
}

/** Starts the lab; `close()` stops it and removes the temp dir. */
export async function startLab(): Promise<Lab> {
  const dir = mkdtempSync(join(tmpdir(), 'transport-lab-'));
  const certs = makeCertificates(dir);
  const seen = { smtpTls: 0, smtpPlain: 0, https: 0 };

  const smtpCert: Record<string, KeyPair> = {
    'mx.testing-expired.example': certs.expired,
    'mx.wrong-name.example': certs.wrong,
    'mx.self-signed.example': certs.self,
  };
  const smtpTls = new SMTPServer({
    secure: false,
    key: certs.good.key,
    cert: certs.good.cert,
    sniOptions: Object.fromEntries(Object.entries(smtpCert).map(([name, pair]) => [name, { key: pair.key, cert: pair.cert }])),
    authOptional: true,
    banner: 'lab STARTTLS',
    logger: false,
    onConnect: (_session, callback) => {
      seen.smtpTls++;
      callback();
    },
  });
  const smtpPlain = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    banner: 'lab plain',
    logger: false,
    onConnect: (_session, callback) => {
      seen.smtpPlain++;
      callback();
    },
  });
  // Silence the per-connection errors a probe's abrupt close causes.
  smtpTls.on('error', () => undefined);
  smtpPlain.on('error', () => undefined);

  const httpsCert: Record<string, KeyPair> = {
    'mta-sts.policy-expired.example': certs.expired,
    'mta-sts.policy-wrong-name.example': certs.wrong,
    'mta-sts.policy-self-signed.example': certs.self,
  };
  const contexts = new Map<string, SecureContext>(Object.entries(httpsCert).map(([name, pair]) => [name, createSecureContext(pair)]));
  const https: HttpsServer = createHttpsServer(
    { key: certs.good.key, cert: certs.good.cert, SNICallback: (name, cb) => cb(null, contexts.get(name.toLowerCase()) ?? createSecureContext(certs.good)) },
    (request, response) => {
      seen.https++;
      const host = (request.headers.host ?? '').replace(/:\d+$/, '').replace(/^mta-sts\./, '');
      const answer = POLICIES[host];
      if (request.url !== '/.well-known/mta-sts.txt' || answer === undefined) {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('no such policy');
        return;
      }
      if (typeof answer === 'object' && answer.status === 0) return; // hold the request: the client's deadline must end it
      if (typeof answer === 'string') {
        response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(answer);
        return;
      }
      response.writeHead(answer.status, { ...(answer.type ? { 'content-type': answer.type } : {}), ...(answer.headers ?? {}) }).end(answer.body ?? '');
    },
  );

  // One SMTP port on every lab address: bind the first on port 0, the others on the port it got.
  await listen(smtpTls.server, 0, SMTP_TLS);
  const smtpPort = (smtpTls.server.address() as { port: number }).port;
  await listen(smtpPlain.server, smtpPort, SMTP_PLAIN);
  const held = new Set<Socket>();
  const tarpit = createNetServer((socket) => {
    held.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => held.delete(socket));
  });
  await listen(tarpit, smtpPort, TARPIT);
  await listen(https, 0, HTTPS_HOST);
  const httpsPort = (https.address() as { port: number }).port;
  const resolver = new ZoneResolver(await loadZoneDirectory(LAB_ZONES));
  const caFile = join(dir, 'ca.pem');
  return {
    dir,
    caPem: certs.ca.cert,
    caFile,
    smtpPort,
    httpsPort,
    resolver,
    seen,
    connectPortsFlag: `smtp=${smtpPort},https=${httpsPort}`,
    close: async () => {
      https.closeAllConnections();
      for (const socket of held) socket.destroy();
      await new Promise<void>((r) => tarpit.close(() => r()));
      await Promise.all([new Promise<void>((r) => smtpTls.close(() => r())), new Promise<void>((r) => smtpPlain.close(() => r())), new Promise<void>((r) => https.close(() => r()))]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
