/**
 * A real Dovecot IMAP server on loopback for the mailbox tests: its own config in a temp dir, a
 * static passdb (one user, one password), maildir storage, STARTTLS on one port and TLS on another
 * with a certificate signed by a test CA made with `openssl`. A missing `dovecot` binary (Debian
 * `dovecot-imapd`) or `openssl` makes the set-up FAIL with a message naming the package.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

/** Where Debian puts the server. */
const DOVECOT = ['/usr/sbin/dovecot', '/usr/local/sbin/dovecot'].find((p) => existsSync(p));

export interface Dovecot {
  dir: string;
  user: string;
  password: string;
  /** STARTTLS port (imap://) and TLS port (imaps://). */
  imapPort: number;
  imapsPort: number;
  /** The test CA's PEM file (for --tls-ca). */
  caFile: string;
  stop(): Promise<void>;
}

function run(command: string, args: string[], cwd: string, pkg: string): void {
  try {
    execFileSync(command, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`this test needs ${command} (apt-get install ${pkg})`);
    throw new Error(`${command} ${args.join(' ')} failed: ${(error as { stderr?: Buffer }).stderr?.toString() ?? ''}`);
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, child: ChildProcess, log: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`dovecot exited (${child.exitCode}): ${existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : ''}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`dovecot did not listen on ${port} within 15 s: ${existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts Dovecot; stop() ends it and removes its directory. */
export async function startDovecot(): Promise<Dovecot> {
  if (!DOVECOT) throw new Error('this test needs the Dovecot IMAP server (apt-get install dovecot-imapd): /usr/sbin/dovecot is missing');
  const dir = mkdtempSync(join(tmpdir(), 'dovecot-'));
  chmodSync(dir, 0o755);
  // The test CA and a leaf for 127.0.0.1 and localhost.
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  run('openssl', ['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '30', '-subj', '/CN=spoof-checker imap test CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir, 'openssl');
  writeFileSync(join(dir, 'leaf.ext'), 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n');
  run('openssl', ['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost'], dir, 'openssl');
  run('openssl', ['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '30', '-extfile', 'leaf.ext'], dir, 'openssl');
  chmodSync(join(dir, 'server.key'), 0o644);

  const root = process.getuid?.() === 0;
  const me = userInfo().username;
  // As root, mail is kept by the dovecot user (Dovecot refuses uid 0 for mail); otherwise by the user running the tests.
  const mailUser = root ? 'dovecot' : me;
  const uid = Number(execFileSync('id', ['-u', mailUser]).toString().trim());
  const gid = Number(execFileSync('id', ['-g', mailUser]).toString().trim());
  for (const sub of ['run', 'state', 'mail']) mkdirSync(join(dir, sub));
  if (root) chownSync(join(dir, 'mail'), uid, gid);
  const [imapPort, imapsPort] = [await freePort(), await freePort()];
  const password = 'imap-test-password';
  const log = join(dir, 'dovecot.log');
  const config = [
    `base_dir = ${dir}/run`,
    `state_dir = ${dir}/state`,
    `log_path = ${log}`,
    `info_log_path = ${log}`,
    'protocols = imap',
    'listen = 127.0.0.1',
    'ssl = yes',
    `ssl_cert = <${dir}/server.pem`,
    `ssl_key = <${dir}/server.key`,
    'ssl_min_protocol = TLSv1.2',
    'disable_plaintext_auth = yes',
    'auth_mechanisms = plain login',
    `mail_location = maildir:${dir}/mail/%u`,
    `first_valid_uid = ${Math.min(uid, 100)}`,
    'first_valid_gid = 0',
    ...(root ? ['default_internal_user = dovecot', 'default_login_user = dovenull'] : [`default_internal_user = ${me}`, `default_login_user = ${me}`]),
    'passdb {',
    '  driver = static',
    `  args = password=${password}`,
    '}',
    'userdb {',
    '  driver = static',
    `  args = uid=${uid} gid=${gid} home=${dir}/mail/%u`,
    '}',
    'service imap-login {',
    `  inet_listener imap {\n    address = 127.0.0.1\n    port = ${imapPort}\n  }`,
    `  inet_listener imaps {\n    address = 127.0.0.1\n    port = ${imapsPort}\n    ssl = yes\n  }`,
    ...(root ? [] : ['  chroot =']),
    '}',
    'service anvil {\n  chroot =\n}',
    'namespace inbox {\n  inbox = yes\n  separator = /\n}',
    '',
  ].join('\n');
  writeFileSync(join(dir, 'dovecot.conf'), config);
  const child = spawn(DOVECOT, ['-F', '-c', join(dir, 'dovecot.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  try {
    await waitForPort(imapPort, child, log);
    await waitForPort(imapsPort, child, log);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}\n${stderr}`);
  }
  return {
    dir,
    user: 'reports',
    password,
    imapPort,
    imapsPort,
    caFile: join(dir, 'ca.pem'),
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
