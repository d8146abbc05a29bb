import { createHash } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import {
  DEFAULT_SERVE_HOST,
  DEFAULT_SERVE_PORT,
  DEMO_API_KEY,
  DEMO_DOMAIN,
  DEMO_FAULTS_FILE,
  DEMO_SEED_FILE,
  DEMO_SERVE_PORT,
  DEMO_ZONES_DIR,
  demoCurlLine,
  localUrl,
  parseApiKeysVariable,
  serve,
  serveConfig,
} from '../../src/cli/serve.js';
import { digestApiKey } from '../../src/store/api-keys.js';
import { createMemoryStores } from '../../src/store/memory.js';
import { applySeed, loadSeedFile } from '../../src/store/seed.js';

function fakeIo(env: NodeJS.ProcessEnv = {}) {
  let stop: (signal: string) => void = () => undefined;
  const stopSignal = new Promise<string>((resolve) => (stop = resolve));
  const out: string[] = [];
  const err: string[] = [];
  // In memory unless a test names a store: without --data, serve would write ./data in the working directory.
  const io: CliIo = { out: (t) => void out.push(t), err: (t) => void err.push(t), stdin: Readable.from([]), stderrIsTTY: false, env: { SPOOF_CHECKER_DATA: ':memory:', ...env }, stopSignal };
  return { io, stop, out, err };
}

/** A strong key for a copy of the demo seed (the published demo keys load under --demo only). */
const STRONG_SEED_KEY = 'sk_seed_3c9e1a7f5b2d4e6f8a0b1c3d5e7f9a2b';

async function waitFor(predicate: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (predicate()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Starts `serve` with the args and returns the base URL it printed, a stop function and the exit code promise. */
async function start(args: string[], env: NodeJS.ProcessEnv = {}) {
  const fake = fakeIo({ LOG_LEVEL: 'silent', ...env });
  const exit = serve(args, fake.io);
  let early: number | undefined;
  void exit.then((code) => (early = code));
  await waitFor(() => early !== undefined || fake.err.join('').includes('listening on'), 'the server to listen');
  if (early !== undefined) throw new Error(`serve exited ${early}: ${fake.err.join('')}`);
  const base = /listening on (http:\/\/\S+)/.exec(fake.err.join(''))?.[1] ?? '';
  return { base, exit, ...fake };
}

describe('serveConfig: flags, then environment, then defaults', () => {
  it('defaults', () => {
    expect(serveConfig([], {})).toMatchObject({ host: DEFAULT_SERVE_HOST, port: DEFAULT_SERVE_PORT, zones: undefined, resolver: undefined, seed: undefined, demo: false, apiKeys: [], rateLimit: true, trustProxy: false, logLevel: 'info', environment: 'development' });
  });

  it('--demo: demo zones, demo seed, port 8787', () => {
    expect(serveConfig(['--demo'], {})).toMatchObject({ demo: true, zones: DEMO_ZONES_DIR, seed: DEMO_SEED_FILE, port: DEMO_SERVE_PORT });
  });

  it.each<[string, string[], NodeJS.ProcessEnv, Record<string, unknown>]>([
    ['environment variables', [], { HOST: '0.0.0.0', PORT: '9000', SPOOF_CHECKER_ZONES: '/z', SPOOF_CHECKER_SEED: '/s.json' }, { host: '0.0.0.0', port: 9000, zones: '/z', seed: '/s.json' }],
    ['a flag beats its variable', ['--port', '9100', '--host', '::1', '--seed', '/f.json'], { PORT: '9000', HOST: '0.0.0.0', SPOOF_CHECKER_SEED: '/s.json' }, { port: 9100, host: '::1', seed: '/f.json' }],
    ['--resolver replaces SPOOF_CHECKER_ZONES', ['--resolver', '192.0.2.53'], { SPOOF_CHECKER_ZONES: '/z' }, { zones: undefined, resolver: '192.0.2.53' }],
    ['--zones replaces SPOOF_CHECKER_RESOLVER', ['--zones', '/mine'], { SPOOF_CHECKER_RESOLVER: '192.0.2.53' }, { zones: '/mine', resolver: undefined }],
    ['--demo with --resolver keeps the resolver', ['--demo', '--resolver', '192.0.2.53:5300'], {}, { zones: undefined, resolver: '192.0.2.53:5300', seed: DEMO_SEED_FILE }],
    ['--demo with --port', ['--demo', '--port', '0'], {}, { port: 0 }],
    ['--demo injects the scenarios\' DNS faults', ['--demo'], {}, { faults: DEMO_FAULTS_FILE }],
    ['no faults without --demo', [], {}, { faults: undefined }],
    ['faults from SPOOF_CHECKER_FAULTS', [], { SPOOF_CHECKER_FAULTS: '/f.json' }, { faults: '/f.json' }],
    ['--faults beats SPOOF_CHECKER_FAULTS and the demo', ['--demo', '--faults', '/mine.json'], { SPOOF_CHECKER_FAULTS: '/f.json' }, { faults: '/mine.json' }],
    ['--faults none turns the demo\'s faults off', ['--demo', '--faults', 'none'], {}, { faults: undefined, zones: DEMO_ZONES_DIR }],
    ['SPOOF_CHECKER_FAULTS=none too', ['--demo'], { SPOOF_CHECKER_FAULTS: 'none' }, { faults: undefined }],
    ['rate limits off', [], { SPOOF_CHECKER_RATE_LIMIT: 'off' }, { rateLimit: false }],
    ['trust proxy CIDRs from the flag beat the variable', ['--trust-proxy', '10.0.0.0/8, fd00::/8'], { SPOOF_CHECKER_TRUST_PROXY: '2' }, { trustProxy: ['10.0.0.0/8', 'fd00::/8'] }],
    ['trust proxy off', [], { SPOOF_CHECKER_TRUST_PROXY: 'off' }, { trustProxy: false }],
    ['Redis from REDIS_URL', [], { REDIS_URL: 'redis://127.0.0.1:6379' }, { redis: 'redis://127.0.0.1:6379' }],
    ['--redis beats REDIS_URL', ['--redis', 'redis://cache.internal:6380/2'], { REDIS_URL: 'redis://127.0.0.1:6379' }, { redis: 'redis://cache.internal:6380/2' }],
    ['trust proxy, base URL, log level, environment', [], { SPOOF_CHECKER_TRUST_PROXY: '1', SPOOF_CHECKER_BASE_URL: 'https://x.test', LOG_LEVEL: 'WARN', NODE_ENV: 'production' }, { trustProxy: 1, baseUrl: 'https://x.test', logLevel: 'warn', environment: 'production' }],
    ['API keys', [], { SPOOF_CHECKER_API_KEYS: 'sk_one_0511f74ca054bb1853567e406c301b3e:org_a, sk:two:sk_one_0511f74ca054bb1853567e406c301b3e:org_b ,' }, { apiKeys: [{ key: 'sk_one_0511f74ca054bb1853567e406c301b3e', organizationId: 'org_a' }, { key: 'sk:two:sk_one_0511f74ca054bb1853567e406c301b3e', organizationId: 'org_b' }] }],
    ['a public URL (trailing slash dropped)', ['--public-url', 'https://checker.example/'], {}, { publicUrl: 'https://checker.example' }],
    ['the demo on a public host with the named flag', ['--demo', '--host', '0.0.0.0', '--public-demo'], {}, { demo: true, host: '0.0.0.0' }],
  ])('%s', (_case, args, env, expected) => {
    expect(serveConfig(args, env)).toMatchObject(expected);
  });

  it.each<[string, string[], NodeJS.ProcessEnv, RegExp]>([
    ['both DNS flags', ['--zones', '/z', '--resolver', '192.0.2.53'], {}, /--zones or --resolver, not both/],
    ['both DNS variables', [], { SPOOF_CHECKER_ZONES: '/z', SPOOF_CHECKER_RESOLVER: '192.0.2.53' }, /not both/],
    ['a port out of range', ['--port', '65536'], {}, /--port must be a whole number from 0 to 65535/],
    ['a PORT that is not a number', [], { PORT: 'http' }, /--port must be a whole number/],
    ['a host name', ['--host', 'example.com'], {}, /--host must be an IP address/],
    ['an unknown flag', ['--verbose'], {}, /verbose/],
    ['a stray argument', ['extra'], {}, /extra/],
    ['a bad rate limit switch', [], { SPOOF_CHECKER_RATE_LIMIT: 'maybe' }, /SPOOF_CHECKER_RATE_LIMIT must be on or off/],
    ['a bad log level', [], { LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of/],
    ['an API key without organisation', [], { SPOOF_CHECKER_API_KEYS: 'sk_only' }, /entry 1 must be "key:organizationId"/],
    ['an organisation id with spaces', [], { SPOOF_CHECKER_API_KEYS: 'sk:org a' }, /entry 1/],
    ['a one-character API key', [], { SPOOF_CHECKER_API_KEYS: 'a:org' }, /entry 1 \(organisation "org"\): the key is too weak: it has 1 character\(s\), fewer than 32/],
    ['a long key of few characters', [], { SPOOF_CHECKER_API_KEYS: `${'ab'.repeat(20)}:org` }, /too weak: it uses only 2 distinct/],
    ['a 32-digit decimal key (106 bits)', [], { SPOOF_CHECKER_API_KEYS: '01234567890123456789012345678901:org' }, /too weak: it carries about 106 bits/],
    ['a 32-character key of sequential runs, repeated', [], { SPOOF_CHECKER_API_KEYS: '0123456789abcdef0123456789abcdef:org' }, /entry 1 \(organisation "org"\): the key is too weak: it is built from sequential runs, repeats or common words/],
    ['the alphabet in order', [], { SPOOF_CHECKER_API_KEYS: 'abcdefghijklmnopqrstuvwxyz012345:org' }, /too weak: it is built from sequential runs/],
    ['a password repeated', [], { SPOOF_CHECKER_API_KEYS: 'Password123!Password123!Password123!:org' }, /too weak: it is built from sequential runs, repeats or common words/],
    ['words, years and symbols', [], { SPOOF_CHECKER_API_KEYS: 'Password123!Welcome2024!Summer2025$:org' }, /too weak: it is built from/],
    ['the published demo key', [], { SPOOF_CHECKER_API_KEYS: 'sk_demo_0123456789abcdef:org' }, /too weak: it has 24 character/],
    ['the demo on a non-loopback host', ['--demo', '--host', '0.0.0.0'], {}, /--demo listens on loopback only.*--public-demo/],
    ['a public URL with a query', ['--public-url', 'https://x.example/?a=1'], {}, /--public-url .* must be an http\(s\) URL/],
    ['a public URL of another scheme', [], { SPOOF_CHECKER_PUBLIC_URL: 'javascript:alert(1)' }, /must be an http\(s\) URL/],
    ['trust proxy "true" (would believe a forged X-Forwarded-For)', [], { SPOOF_CHECKER_TRUST_PROXY: 'true' }, /would believe any X-Forwarded-For.*hop count|number of proxies/],
    ['a trust proxy entry that is not an address', ['--trust-proxy', '10.0.0.0/8,proxy.internal'], {}, /"proxy\.internal" is not an IP address or CIDR block/],
    ['a CIDR prefix out of range', ['--trust-proxy', '10.0.0.0/33'], {}, /prefix length that is not 0 to 32/],
    ['a Redis URL of another scheme', ['--redis', 'http://127.0.0.1:6379'], {}, /must be a redis:\/\/ or rediss:\/\/ URL/],
    ['an empty --faults', ['--faults', ' '], {}, /--faults needs a file \(or none\)/],
  ])('refuses %s', (_case, args, env, message) => {
    expect(() => serveConfig(args, env)).toThrow(message);
  });
});

/** The start of a key strong enough for SPOOF_CHECKER_API_KEYS (32 hex digits and more). */
const STRONG = 'sk_9f86d081884c7d659a2feaa0c55ad015';

describe('parseApiKeysVariable', () => {
  it.each<[string | undefined, { key: string; organizationId: string }[]]>([
    [undefined, []],
    ['', []],
    ['  ', []],
    [`${STRONG}1:o1`, [{ key: `${STRONG}1`, organizationId: 'o1' }]],
    [`${STRONG}1:o1,${STRONG}2:o2`, [{ key: `${STRONG}1`, organizationId: 'o1' }, { key: `${STRONG}2`, organizationId: 'o2' }]],
  ])('%j', (text, expected) => {
    expect(parseApiKeysVariable(text)).toEqual(expected);
  });
});

describe('helpers of the start-up message', () => {
  it.each([
    ['127.0.0.1', 8787, 'http://127.0.0.1:8787'],
    ['0.0.0.0', 80, 'http://127.0.0.1:80'],
    ['::', 8080, 'http://[::1]:8080'],
    ['::1', 8080, 'http://[::1]:8080'],
  ])('localUrl(%s, %i) = %s', (host, port, url) => {
    expect(localUrl(host, port)).toBe(url);
  });

  it('the demo curl line is a complete POST with the demo key and a JSON body', () => {
    expect(demoCurlLine('http://127.0.0.1:8787')).toBe(
      `curl -s -X POST http://127.0.0.1:8787/api/tools/v1/spoof-checker -H 'Authorization: Bearer ${DEMO_API_KEY}' -H 'Content-Type: application/json' -d '{"domain":"p-none.example"}'`,
    );
  });

  it('the demo key is a key of org_demo in the demo seed (whose published keys load only when weak keys are allowed)', async () => {
    await expect(loadSeedFile(DEMO_SEED_FILE)).rejects.toThrow(/\/organizations\/0\/apiKeys\/0\/key is too weak: it has 24 character\(s\), fewer than 32/);
    const stores = createMemoryStores();
    await applySeed(stores, await loadSeedFile(DEMO_SEED_FILE, { allowWeakKeys: true }));
    expect((await stores.apiKeys.findByDigest(digestApiKey(DEMO_API_KEY)))?.organizationId).toBe('org_demo');
  });
});

describe('spoof-checker serve', () => {
  it('--help prints the usage and every environment variable', async () => {
    const fake = fakeIo();
    expect(await serve(['--help'], fake.io)).toBe(0);
    const usage = fake.out.join('');
    for (const name of ['HOST', 'PORT', 'SPOOF_CHECKER_ZONES', 'SPOOF_CHECKER_RESOLVER', 'SPOOF_CHECKER_SEED', 'SPOOF_CHECKER_API_KEYS', 'SPOOF_CHECKER_RATE_LIMIT', 'LOG_LEVEL']) {
      expect(usage).toContain(name);
    }
  });

  it('a usage error exits 2 with the usage', async () => {
    const fake = fakeIo();
    expect(await serve(['--port', 'x'], fake.io)).toBe(2);
    expect(fake.err.join('')).toMatch(/serve: --port must be a whole number[\s\S]*Usage: spoof-checker serve/);
  });

  it('SPOOF_CHECKER_RANGES naming a file that is not provider data exits 2, naming it', async () => {
    const fake = fakeIo({ SPOOF_CHECKER_RANGES: DEMO_SEED_FILE });
    expect(await serve(['--port', '0'], fake.io)).toBe(2);
    expect(fake.err.join('')).toMatch(/--ranges \/ SPOOF_CHECKER_RANGES: .*demo\.json: "format" is undefined/);
  });

  it('a zone directory that does not load exits 2', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'zones-'));
    const fake = fakeIo({ LOG_LEVEL: 'silent' });
    expect(await serve(['--zones', dir, '--port', '0'], fake.io)).toBe(2);
    expect(fake.err.join('')).toContain(dir);
  });

  it('the demo seed without --demo exits 1: its published keys are too weak outside the loopback demo', async () => {
    const fake = fakeIo({ LOG_LEVEL: 'silent' });
    expect(await serve(['--seed', DEMO_SEED_FILE, '--resolver', '127.0.0.1:1', '--port', '0'], fake.io)).toBe(1);
    expect(fake.err.join('')).toMatch(/demo\.json: \/organizations\/0\/apiKeys\/0\/key is too weak: it has 24 character\(s\), fewer than 32/);
  });

  it('a bad seed file exits 1 naming the file and the JSON path', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'seed-'));
    const file = join(dir, 'bad.json');
    await writeFile(file, JSON.stringify({ organizations: [{ id: 'org_x', name: 'X', domains: [{ id: 'd' }] }] }));
    const fake = fakeIo({ LOG_LEVEL: 'silent' });
    expect(await serve(['--seed', file, '--resolver', '127.0.0.1:1', '--port', '0'], fake.io)).toBe(1);
    expect(fake.err.join('')).toContain(`${file}: /organizations/0/domains/0/domain is required`);
  });

  it('serves the seed and the keys of SPOOF_CHECKER_API_KEYS, then stops cleanly on a signal', async () => {
    // The demo seed with its published (weak) keys replaced by strong ones: outside --demo weak keys are refused.
    const seedFile = join(await mkdtemp(join(tmpdir(), 'serve-seed-')), 'seed.json');
    await writeFile(seedFile, (await readFile(DEMO_SEED_FILE, 'utf8')).replaceAll(DEMO_API_KEY, STRONG_SEED_KEY).replaceAll('sk_other_fedcba9876543210', 'sk_other_9e1f0c7b5a3d2e4f6a8b0c1d3e5f7a9b'));
    const server = await start(['--seed', seedFile, '--resolver', '127.0.0.1:1', '--port', '0'], {
      SPOOF_CHECKER_API_KEYS: 'sk_env_7f3a9c1e5b2d8f4a6c0e1b3d5f7a9c2e:org_env,sk_env_c4e6a8b0d2f413579bdf02468ace1357:org_demo',
    });
    expect(server.err.join('')).toMatch(/DNS: .*127\.0\.0\.1:1.*; rate limits on/);
    // The shipped provider data dates from July 2025: the start-up line says how old, and that it is stale.
    expect(server.err.join('')).toMatch(/\n  SPF shared infrastructure: provider ranges from the shipped snapshot, dated 2025-07-21: STALE \(\d+ days old, over 90\)/);
    const email = await fetch(`${server.base}/api/logs/v1/emails/eml_demo_welcome`, { headers: { authorization: `Bearer ${STRONG_SEED_KEY}` } });
    expect(email.status).toBe(200);
    expect(((await email.json()) as { events: { type: string }[] }).events.map((e) => e.type)).toEqual(['queued', 'sent', 'delivered']);
    const viaEnvKey = await fetch(`${server.base}/api/logs/v1/emails/eml_demo_welcome`, { headers: { 'x-api-key': 'sk_env_c4e6a8b0d2f413579bdf02468ace1357' } });
    expect(viaEnvKey.status).toBe(200);
    const fresh = await fetch(`${server.base}/api/contacts/list`, { headers: { 'x-api-key': 'sk_env_7f3a9c1e5b2d8f4a6c0e1b3d5f7a9c2e' } });
    expect(await fresh.json()).toMatchObject({ total: 0, totalContacts: 0 });
    expect(server.err.join('')).not.toContain('try: curl');
    // Start-up names each key by its id, never by the key or a prefix of its SHA-256.
    const startup = server.err.join('');
    expect(startup).toMatch(/API key key_[0-9a-f]{12} for organisation org_env/);
    expect(startup).not.toContain('sk_env_7f3a9c1e5b2d8f4a6c0e1b3d5f7a9c2e');
    expect(startup).not.toContain(createHash('sha256').update('sk_env_7f3a9c1e5b2d8f4a6c0e1b3d5f7a9c2e').digest('hex').slice(0, 8));
    server.stop('SIGTERM');
    expect(await server.exit).toBe(0);
    expect(server.err.join('')).toContain('SIGTERM: finishing requests in flight, then stopping');
    await expect(fetch(`${server.base}/openapi.json`)).rejects.toThrow();
  });

  it('a bare hop count for --trust-proxy starts, with a warning naming the safer form', async () => {
    const server = await start(['--trust-proxy', '1', '--resolver', '127.0.0.1:1', '--port', '0']);
    expect(server.err.join('')).toMatch(/warning: --trust-proxy 1 believes X-Forwarded-For from whoever connects/);
    server.stop('SIGTERM');
    expect(await server.exit).toBe(0);
    const quiet = await start(['--trust-proxy', '10.0.0.0/8,127.0.0.1', '--resolver', '127.0.0.1:1', '--port', '0']);
    expect(quiet.err.join('')).not.toContain('warning');
    quiet.stop('SIGTERM');
    expect(await quiet.exit).toBe(0);
  });

  it('--demo prints a curl line that works as it is: a verdict from the fixture zones', async () => {
    const server = await start(['--demo', '--port', '0']);
    const line = /try: (curl .*)/.exec(server.err.join(''))?.[1] ?? '';
    expect(line).toBe(demoCurlLine(server.base));
    const url = /-X POST (\S+)/.exec(line)?.[1] ?? '';
    const body = /-d '([^']+)'/.exec(line)?.[1] ?? '';
    const response = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${DEMO_API_KEY}`, 'content-type': 'application/json' }, body });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ domain: 'p-none.example', verdict: 'spoofable', inboxOutcome: 'delivered', dmarc: { policy: 'none' } });
    server.stop('SIGINT');
    expect(await server.exit).toBe(0);
  });

  it('--demo answers the fault scenarios as their goldens do: a DNS failure is not a verdict', async () => {
    const server = await start(['--demo', '--port', '0']);
    expect(server.err.join('')).toMatch(/DNS: \d+ zone\(s\) from .*; 9 DNS fault\(s\) from .*fixtures\/scenarios\.json, each for its scenario;/);
    const post = (domain: string) =>
      fetch(`${server.base}/api/tools/v1/spoof-checker`, {
        method: 'POST',
        headers: { authorization: `Bearer ${DEMO_API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ domain }),
      });
    const failed = await post('dmarc-servfail.example');
    expect(failed.status).toBe(502);
    expect(await failed.json()).toMatchObject({
      statusCode: 502,
      code: 'DNS_FAILURE',
      message: 'The DNS lookup of the DMARC record (TXT _dmarc.dmarc-servfail.example) failed (SERVFAIL): injected fault.',
    });
    const timedOut = await post('dmarc-timeout.example');
    expect(timedOut.status).toBe(503);
    expect(await timedOut.json()).toMatchObject({ code: 'DNS_TIMEOUT' });
    const verdict = await post(DEMO_DOMAIN);
    expect(verdict.status).toBe(200);
    expect(await verdict.json()).toMatchObject({ domain: DEMO_DOMAIN, verdict: 'spoofable', dmarc: { policy: 'none' } });
    server.stop('SIGINT');
    expect(await server.exit).toBe(0);
  });

  it('--demo --faults none: the zones alone', async () => {
    const server = await start(['--demo', '--port', '0', '--faults', 'none']);
    expect(server.err.join('')).not.toContain('fault');
    const response = await fetch(`${server.base}/api/tools/v1/spoof-checker`, {
      method: 'POST',
      headers: { authorization: `Bearer ${DEMO_API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ domain: 'dmarc-servfail.example' }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ verdict: 'protected' });
    server.stop('SIGINT');
    expect(await server.exit).toBe(0);
  });

  it('a bad faults file: exit 2 with one line naming it', async () => {
    const file = join(await mkdtemp(join(tmpdir(), 'serve-faults-')), 'faults.json');
    await writeFile(file, '[{"name": "a.example", "fault": {"kind": "servfail", "ms": 1}}]');
    const fake = fakeIo({ LOG_LEVEL: 'silent' });
    expect(await serve(['--demo', '--port', '0', '--faults', file], fake.io)).toBe(2);
    // The store's line comes first; the problem is the last line, alone.
    expect(fake.err.join('').trimEnd().split('\n').at(-1)).toBe(`serve: ${file}: /0/fault/ms is not an allowed field for kind servfail (allowed: kind)`);
  });

  it('the demo seed file is valid JSON with both organisations', async () => {
    const seed = JSON.parse(await readFile(DEMO_SEED_FILE, 'utf8')) as { organizations: { id: string }[] };
    expect(seed.organizations.map((o) => o.id)).toEqual(['org_demo', 'org_other']);
  });
});
