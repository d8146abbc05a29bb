/**
 * A DNS server that cannot be reached (issue 38 item 1): every socket error of the network resolver
 * (UDP connect and send, the TCP retry of a truncated answer) and of the DNSSEC queries is that
 * lookup's failure (`error`, never NXDOMAIN, NODATA or a missing record), never a thrown exception
 * or a process exit. Shown with injected failing sockets, with addresses the kernel refuses at once
 * (255.255.255.255: EACCES; fe80::1 without a scope: EINVAL), and with a network namespace that has
 * only `lo` (`unshare -n`: ENETUNREACH for any other address, as on an offline machine); through the
 * resolver, the library (`checkDomain`), the CLI (`check`) and `serve`, which keeps answering.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { NetworkResolver } from '../../packages/engine/src/dns/network-resolver.js';
import { createRawQuery } from '../../packages/engine/src/dnssec/query.js';
import { TYPE } from '../../packages/engine/src/dns/canonical.js';
import { checkDomain } from '../../packages/engine/src/check.js';
import { ianaRootAnchors } from '../../packages/engine/src/dnssec/anchors.js';
import { isSpoofCheckError } from '../../packages/engine/src/errors.js';
import { BIN, killAll, ROOT, startServeProcess } from '../setup/serve-process.js';
import dnsPacket from 'dns-packet';

/** Addresses this host's kernel refuses to connect a UDP socket to, at once and without sending. */
const REFUSED_BY_KERNEL = [
  ['255.255.255.255', 'EACCES'],
  ['[fe80::1]', 'EINVAL'],
] as const;
/** TEST-NET-1 (RFC 5737): in a namespace with only `lo` there is no route to it. */
const UNROUTED = '192.0.2.53';

function errnoError(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`connect ${code}`), { code, errno: -101, syscall: 'connect' });
}

/** Records any exception or rejection that escapes while `run` runs (vitest would only report it later). */
async function noEscapes<T>(run: () => Promise<T>): Promise<T> {
  const escaped: unknown[] = [];
  const onError = (error: unknown): void => void escaped.push(error);
  process.on('uncaughtException', onError);
  process.on('unhandledRejection', onError);
  try {
    const value = await run();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(escaped).toEqual([]);
    return value;
  } finally {
    process.off('uncaughtException', onError);
    process.off('unhandledRejection', onError);
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the network resolver: an injected failing socket', () => {
  it('a UDP connect that fails (ENETUNREACH) is an error answer naming the server, never a throw', async () => {
    vi.spyOn(dgram.Socket.prototype, 'connect').mockImplementation(function (this: dgram.Socket, ...args: unknown[]) {
      const callback = args.find((arg) => typeof arg === 'function') as ((error?: Error) => void) | undefined;
      process.nextTick(() => callback?.(errnoError('ENETUNREACH')));
    } as never);
    const resolver = new NetworkResolver({ servers: ['192.0.2.53'], timeoutMs: 500, attempts: 2 });
    const answer = await noEscapes(() => resolver.resolve('example.com', 'TXT'));
    expect(answer.kind).toBe('error');
    expect(answer).toMatchObject({ reason: 'servfail', detail: expect.stringContaining('ENETUNREACH') });
    expect((answer as { detail: string }).detail).toContain('192.0.2.53:53');
    resolver.close();
  });

  it('a UDP send that throws is an error answer, never a throw', async () => {
    vi.spyOn(dgram.Socket.prototype, 'send').mockImplementation(() => {
      throw errnoError('EPERM');
    });
    const resolver = new NetworkResolver({ servers: ['127.0.0.1:9'], timeoutMs: 500, attempts: 1 });
    const answer = await noEscapes(() => resolver.resolve('example.com', 'MX'));
    expect(answer).toMatchObject({ kind: 'error', detail: expect.stringContaining('EPERM') });
    resolver.close();
  });

  it('the TCP retry of a truncated answer whose connection fails (ENETUNREACH) is an error answer', async () => {
    // A UDP server on loopback that answers every query truncated (TC), so that the resolver retries over TCP.
    const server = dgram.createSocket('udp4');
    server.on('message', (bytes, peer) => {
      const query = dnsPacket.decode(bytes);
      server.send(dnsPacket.encode({ id: query.id, type: 'response', flags: dnsPacket.TRUNCATED_RESPONSE | dnsPacket.RECURSION_DESIRED, questions: query.questions }), peer.port, peer.address);
    });
    await new Promise<void>((resolve) => server.bind(0, '127.0.0.1', resolve));
    const { port } = server.address();
    const connect = vi.spyOn(net, 'connect').mockImplementation((() => {
      const socket = new net.Socket();
      process.nextTick(() => socket.destroy(errnoError('ENETUNREACH')));
      return socket;
    }) as never);
    const resolver = new NetworkResolver({ servers: [`127.0.0.1:${port}`], timeoutMs: 1000, attempts: 1 });
    try {
      const answer = await noEscapes(() => resolver.resolve('example.com', 'TXT'));
      expect(connect).toHaveBeenCalled();
      expect(answer).toMatchObject({ kind: 'error', detail: expect.stringContaining('ENETUNREACH') });
    } finally {
      resolver.close();
      server.close();
    }
  });

  it('the DNSSEC query over a UDP socket whose send fails is an error, never a throw', async () => {
    vi.spyOn(dgram.Socket.prototype, 'send').mockImplementation(() => {
      throw errnoError('ENETUNREACH');
    });
    const query = createRawQuery([{ host: '192.0.2.53', port: 53 }], { timeoutMs: 500, attempts: 2 });
    const response = await noEscapes(() => query('example.com', TYPE.DNSKEY));
    expect(response).toMatchObject({ kind: 'error', detail: expect.stringContaining('ENETUNREACH') });
  });
});

describe('the network resolver: servers the kernel will not send to', () => {
  it.each(REFUSED_BY_KERNEL)('%s (%s): every type is an error answer, at once', async (server, code) => {
    const resolver = new NetworkResolver({ servers: [server], timeoutMs: 5000, attempts: 2 });
    const answers = await noEscapes(() => Promise.all((['TXT', 'MX', 'A', 'AAAA'] as const).map((type) => resolver.resolve('example.com', type))));
    for (const answer of answers) expect(answer).toMatchObject({ kind: 'error', reason: 'servfail', detail: expect.stringContaining(code) });
    resolver.close();
  });

  it.each(REFUSED_BY_KERNEL)('the DNSSEC query to %s is an error', async (server) => {
    const host = server.replace(/^\[|\]$/g, '');
    const response = await noEscapes(() => createRawQuery([{ host, port: 53 }], { timeoutMs: 500, attempts: 2 })('example.com', TYPE.DNSKEY));
    expect(response.kind).toBe('error');
  });

  it('the library: checkDomain settles with a dns_failure refusal the caller catches (validation on), never a process exit', async () => {
    const network = new NetworkResolver({ servers: ['255.255.255.255'], timeoutMs: 2000, attempts: 2 });
    const outcome = await noEscapes(() =>
      checkDomain('example.com', { resolver: network, dnssec: { query: network.dnssecQuery(), anchors: ianaRootAnchors() } }).then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      ),
    );
    expect('error' in outcome && isSpoofCheckError(outcome.error) && outcome.error.code).toBe('dns_failure');
    network.close();
  });
});

/** `node …args` inside a new network namespace holding only `lo` (root and util-linux `unshare` needed). */
function inNamespaceWithOnlyLo(args: string[]): ReturnType<typeof spawnSync> {
  const probe = spawnSync('unshare', ['-n', 'true']);
  if (probe.error || probe.status !== 0) {
    throw new Error(`these tests need \`unshare -n\` (util-linux, run as root) to make a network namespace with only lo: ${probe.error?.message ?? probe.stderr.toString()}`);
  }
  return spawnSync('unshare', ['-n', process.execPath, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000, env: { PATH: process.env['PATH'] } });
}

function requireBuild(): void {
  if (!existsSync(join(ROOT, 'dist/cli/check.js')) || !existsSync(join(ROOT, 'packages/engine/dist/index.js'))) {
    throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
  }
}

describe('no route to the server (a network namespace with only lo: ENETUNREACH)', () => {
  it('the resolver and the DNSSEC query answer errors, and the process ends normally', () => {
    requireBuild();
    const script = `
      import { NetworkResolver } from '@spoof-checker/engine';
      const resolver = new NetworkResolver({ servers: ['${UNROUTED}'], timeoutMs: 3000, attempts: 2 });
      const answers = await Promise.all(['TXT', 'MX', 'A'].map((type) => resolver.resolve('example.com', type)));
      const raw = await resolver.dnssecQuery()('example.com', 48);
      console.log(JSON.stringify({ answers, raw }));`;
    const run = inNamespaceWithOnlyLo(['--input-type=module', '-e', script]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const { answers, raw } = JSON.parse(String(run.stdout)) as { answers: { kind: string; detail: string }[]; raw: { kind: string } };
    for (const answer of answers) expect(answer).toMatchObject({ kind: 'error', detail: expect.stringContaining('ENETUNREACH') });
    expect(raw.kind).toBe('error');
  });

  it('the CLI: check exits 1 with a dns_failure line and no stack trace', () => {
    requireBuild();
    const run = inNamespaceWithOnlyLo([BIN, 'check', 'example.com', '--resolver', UNROUTED]);
    expect(run.status).toBe(1);
    expect(run.stdout).toContain('example.com: cannot check (dns_failure)');
    expect(run.stderr).not.toMatch(/Error|\n\s+at /);
  });

  it('the CLI with --json: one error line per input', () => {
    requireBuild();
    const run = inNamespaceWithOnlyLo([BIN, 'check', 'example.com', 'example.org', '--resolver', UNROUTED, '--json']);
    expect(run.status).toBe(1);
    const lines = String(run.stdout).trim().split('\n').map((line) => JSON.parse(line) as { input: string; error: { code: string } });
    expect(lines.map((line) => [line.input, line.error.code])).toEqual([
      ['example.com', 'dns_failure'],
      ['example.org', 'dns_failure'],
    ]);
  });
});

describe('serve over a server it cannot reach', () => {
  const children = new Set<ChildProcess>();
  afterEach(() => killAll(children));

  it('answers each check with a DNS failure and keeps answering /healthz and further checks', async () => {
    const key = 'sk_unreachable_test_1f3870be274f6c49b3e31a0c6728957f';
    const served = await startServeProcess(['--port', '0', '--resolver', '255.255.255.255', '--data', ':memory:'], {
      env: { SPOOF_CHECKER_API_KEYS: `${key}:org-1` },
      startTimeoutMs: 30_000,
      children,
    });
    for (const domain of ['example.com', 'example.org', 'example.net']) {
      const response = await fetch(`${served.base}/api/tools/v1/spoof-checker`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ domain }),
        signal: AbortSignal.timeout(20_000),
      });
      // 502: the DNS the verdict rests on failed (never a verdict over "no record").
      expect(response.status).toBe(502);
      expect(await response.json()).toMatchObject({ code: 'DNS_FAILURE', query: { name: domain } });
      expect((await fetch(`${served.base}/healthz`, { signal: AbortSignal.timeout(5000) })).status).toBe(200);
    }
    expect(served.child.exitCode).toBe(null);
    expect(served.stderr()).not.toContain('ERR_SOCKET');
  });
});
