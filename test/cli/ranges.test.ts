/**
 * `spoof-checker ranges`: show, update from local copies (and the verdict following the data), and
 * update over HTTPS from a local server whose certificate a test CA made with `openssl` signed.
 * Nothing here leaves 127.0.0.1.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { updateRanges } from '../../src/cli/ranges.js';
import { describeRanges, userRangesFile } from '../../src/cli/ranges-options.js';
import { SHIPPED_RANGES_FILE } from '../../packages/engine/src/ranges/snapshot.js';
import { loadRangesFile } from '../../packages/engine/src/ranges/snapshot.js';
import { captureIo, FIXTURE_ZONES } from './helpers.js';

const FEEDS_DIR = fileURLToPath(new URL('../../fixtures/provider-ranges/', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'spoof-checker-ranges-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The parts of the AWS feed the tests edit. */
interface AwsFeed {
  createDate: string;
  prefixes: { ip_prefix: string; service: string }[];
  ipv6_prefixes: { ipv6_prefix: string; service: string }[];
}

/** Copies of the official feeds, with `edit` applied to the AWS file. */
function feedCopy(name: string, edit: (aws: AwsFeed) => void = () => {}): string {
  const dir = join(work, name);
  execFileSync('mkdir', ['-p', dir]);
  for (const file of readdirSync(FEEDS_DIR)) copyFileSync(join(FEEDS_DIR, file), join(dir, file));
  const aws = JSON.parse(readFileSync(join(dir, 'aws-ip-ranges.json'), 'utf8'));
  edit(aws);
  writeFileSync(join(dir, 'aws-ip-ranges.json'), JSON.stringify(aws));
  return dir;
}

async function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  const { io, stdout, stderr } = captureIo();
  io.env = env;
  const code = await main(args, io);
  return { code, out: stdout(), err: stderr() };
}

describe('spoof-checker ranges show', () => {
  it('prints the shipped data: its date, that it is stale, each source and each provider service', async () => {
    const { code, out } = await run(['ranges', 'show']);
    expect(code).toBe(0);
    expect(out).toContain('Provider data: shipped snapshot');
    expect(out).toMatch(/Dated 2025-07-21 \(\d+ days old: STALE, over 90 days/);
    expect(out).toMatch(/aws\s+2025-07-24\s+\d+ prefixes\s+https:\/\/ip-ranges\.amazonaws\.com\/ip-ranges\.json/);
    expect(out).toMatch(/Amazon EC2\s+rent\s+[\d,]+ IPv4/);
    expect(out).toMatch(/GitHub Actions runners\s+runner/);
  });

  it('--json gives the same as one JSON object', async () => {
    const { code, out } = await run(['ranges', 'show', '--json']);
    expect(code).toBe(0);
    const summary = JSON.parse(out);
    expect(summary).toMatchObject({ origin: 'shipped snapshot', date: '2025-07-21', stale: true });
    expect(summary.categories).toContainEqual(expect.objectContaining({ provider: 'aws', service: 'EC2', kind: 'rent', ipv4Addresses: expect.any(Number) }));
  });

  it.each([
    [['ranges'], /Usage: spoof-checker ranges show/],
    [['ranges', 'list'], /unknown subcommand 'list'/],
    [['ranges', 'update'], /give --out FILE/],
    [['ranges', 'update', '--out', '/tmp/x.json', '--from', '/no/such/dir'], /no such directory/],
    [['ranges', 'show', '--ranges', '/no/such/file.json'], /cannot read \/no\/such\/file\.json/],
  ])('%j is a usage error', async (args, message) => {
    const { code, err } = await run(args);
    expect(code).toBe(2);
    expect(err).toMatch(message);
  });
});

describe('spoof-checker ranges update --from DIR', () => {
  it('builds a data file that check uses with --ranges, and a range removed from the feed changes the verdict', async () => {
    const whole = join(work, 'whole.json');
    const updated = await run(['ranges', 'update', '--from', feedCopy('whole'), '--out', whole]);
    expect(updated.code).toBe(0);
    expect(updated.out).toMatch(/^wrote .*whole\.json: provider data dated 2025-07-21\n$/);
    expect(updated.err).toMatch(/aws\s+updated\s+\d+ prefixes/);
    expect(loadRangesFile(whole).ok).toBe(true);

    const before = await run(['check', '--zones', FIXTURE_ZONES, '--ranges', whole, '--json', 'spf-cloud-ec2.example']);
    expect(JSON.parse(before.out)).toMatchObject({ verdict: 'spoofable', details: { rule: 'spf-shared-infrastructure', spf: { sharedInfrastructure: { data: { origin: whole } } } } });

    // The same feeds without 3.224.0.0/12 (the EC2 block the zone authorises a /16 of).
    const trimmed = join(work, 'trimmed.json');
    const dir = feedCopy('trimmed', (aws) => {
      aws.prefixes = aws.prefixes.filter((p) => p.ip_prefix !== '3.224.0.0/12');
    });
    expect((await run(['ranges', 'update', '--from', dir, '--out', trimmed])).code).toBe(0);
    const after = await run(['check', '--zones', FIXTURE_ZONES, '--json', 'spf-cloud-ec2.example'], { SPOOF_CHECKER_RANGES: trimmed });
    expect(JSON.parse(after.out)).toMatchObject({ verdict: 'protected', details: { rule: 'dmarc-reject' } });
  });

  it('a feed that does not parse keeps the previous data of the file it replaces, and says so (exit 1)', async () => {
    const out = join(work, 'kept.json');
    expect((await run(['ranges', 'update', '--from', feedCopy('good'), '--out', out])).code).toBe(0);
    const before = JSON.parse(readFileSync(out, 'utf8'));
    const broken = feedCopy('broken');
    writeFileSync(join(broken, 'github-ip-ranges.json'), '<html>rate limited</html>');
    const result = await run(['ranges', 'update', '--from', broken, '--out', out]);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/github\s+kept\s+refused \(github-ip-ranges\.json does not parse: not valid JSON/);
    expect(result.out).toMatch(/previous data \(from .*kept\.json\) kept for github/);
    const after = JSON.parse(readFileSync(out, 'utf8'));
    expect(after.categories.filter((c: { provider: string }) => c.provider === 'github')).toEqual(before.categories.filter((c: { provider: string }) => c.provider === 'github'));
  });

  it.each([
    ['0.0.0.0/0 filed as EC2', (aws: AwsFeed) => aws.prefixes.push({ ip_prefix: '0.0.0.0/0', service: 'EC2' }), /aws-ip-ranges\.json does not parse: prefixes\[\d+\]\.ip_prefix is "0\.0\.0\.0\/0", wider than any provider holds/],
    ['::/0 filed as EC2', (aws: AwsFeed) => aws.ipv6_prefixes.push({ ipv6_prefix: '::/0', service: 'EC2' }), /ipv6_prefixes\[\d+\]\.ipv6_prefix is "::\/0", wider than any provider holds/],
    ['createDate 0000-00-00', (aws: AwsFeed) => (aws.createDate = '0000-00-00'), /createDate is "0000-00-00", not a date/],
    ['createDate in the future', (aws: AwsFeed) => (aws.createDate = '2999-01-01-00-00-00'), /aws-ip-ranges\.json is dated 2999-01-01, later than today/],
  ])('an implausible feed (%s) is refused: exit 1, the previous data kept, the reason said', async (_what, edit, reason) => {
    const out = join(work, 'implausible.json');
    expect((await run(['ranges', 'update', '--from', feedCopy('plausible'), '--out', out])).code).toBe(0);
    const before = readFileSync(out, 'utf8');
    const result = await run(['ranges', 'update', '--from', feedCopy('implausible', edit as never), '--out', out]);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/aws\s+kept\s+refused \(/);
    expect(result.err).toMatch(reason);
    const after = JSON.parse(readFileSync(out, 'utf8'));
    expect(after.categories.filter((c: { provider: string }) => c.provider === 'aws')).toEqual(JSON.parse(before).categories.filter((c: { provider: string }) => c.provider === 'aws'));
    // Never "NaN days old": the data's age stays a number.
    const shown = await run(['ranges', 'show', '--ranges', out]);
    expect(shown.code).toBe(0);
    expect(shown.out).not.toMatch(/NaN/);
    expect(shown.out).toMatch(/\(\d+ days old/);
  });

  it('a feed that carries no date at all (Azure\'s) is accepted, dated by when it was read', async () => {
    const out = join(work, 'undated.json');
    expect((await run(['ranges', 'update', '--from', feedCopy('undated'), '--out', out])).code).toBe(0);
    const azure = JSON.parse(readFileSync(out, 'utf8')).sources.find((s: { provider: string }) => s.provider === 'azure');
    expect(azure).toMatchObject({ date: null, readAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) });
  });

  it('writes through a fresh temporary file: symlinks and files planted at the old predictable names are neither followed nor touched', async () => {
    const dir = mkdtempSync(join(work, 'planted-'));
    const out = join(dir, 'data.json');
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'precious\n');
    symlinkSync(victim, `${out}.${process.pid}.tmp`);
    writeFileSync(`${out}.tmp`, 'someone else\n');
    const result = await run(['ranges', 'update', '--from', feedCopy('planted'), '--out', out]);
    expect(result.code).toBe(0);
    expect(loadRangesFile(out).ok).toBe(true);
    expect(lstatSync(out).isSymbolicLink()).toBe(false);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(readlinkSync(`${out}.${process.pid}.tmp`)).toBe(victim);
    expect(readFileSync(`${out}.tmp`, 'utf8')).toBe('someone else\n');
    expect(readdirSync(dir).sort()).toEqual(['data.json', 'data.json.tmp', `data.json.${process.pid}.tmp`, 'victim.txt'].sort());
  });

  it('a data file dated in the future is refused (it would never go stale)', async () => {
    const file = JSON.parse(readFileSync(join(work, 'whole.json'), 'utf8'));
    const future = join(work, 'future-date.json');
    writeFileSync(future, JSON.stringify({ ...file, date: '2999-01-01' }));
    const { code, err } = await run(['ranges', 'show', '--ranges', future]);
    expect(code).toBe(2);
    expect(err).toMatch(/"date" is 2999-01-01, later than today/);
  });

  it('a data file whose date is not a day (0000-00-00) is refused, never shown as NaN days old', async () => {
    const file = JSON.parse(readFileSync(join(work, 'whole.json'), 'utf8'));
    const bad = join(work, 'nan-date.json');
    writeFileSync(bad, JSON.stringify({ ...file, date: '0000-00-00' }));
    const { code, err, out } = await run(['ranges', 'show', '--ranges', bad]);
    expect(code).toBe(2);
    expect(err).toMatch(/"date" is "0000-00-00", not a YYYY-MM-DD day/);
    expect(out).not.toMatch(/NaN/);
  });

  it('--ranges with a file that is not provider data is a usage error on check', async () => {
    const bad = join(work, 'bad.json');
    writeFileSync(bad, '{"format":"something else"}');
    const { code, err } = await run(['check', '--zones', FIXTURE_ZONES, '--ranges', bad, 'spf-cloud-ec2.example']);
    expect(code).toBe(2);
    expect(err).toMatch(/--ranges \/ SPOOF_CHECKER_RANGES: .*bad\.json: "format" is "something else"/);
  });

  it.each([
    ['scan', ['scan', '-', '--zones', FIXTURE_ZONES]],
    ['worker', ['worker', '--redis', 'redis://127.0.0.1:1', '--data', '/nonexistent-spoof-checker-data']],
  ])('%s takes --ranges too, and refuses a file that is not provider data before any work', async (_name, args) => {
    const bad = join(work, 'bad-for-commands.json');
    writeFileSync(bad, '[]');
    const { code, err } = await run([...args, '--ranges', bad]);
    expect(code).toBe(2);
    expect(err).toMatch(/--ranges \/ SPOOF_CHECKER_RANGES: .*bad-for-commands\.json: not a JSON object/);
  });

  it('scan --ranges FILE classifies with that file', async () => {
    const data = join(work, 'whole.json');
    const { io, stdout } = captureIo('spf-cloud-ec2.example\n');
    expect(await main(['scan', '-', '--zones', FIXTURE_ZONES, '--ranges', data, '--details'], io)).toBe(0);
    expect(JSON.parse(stdout())).toMatchObject({ verdict: 'spoofable', details: { spf: { sharedInfrastructure: { data: { origin: data } } } } });
  });

  it("serve's start-up phrase names the data and flags it stale past 90 days", () => {
    const data = loadRangesFile(join(work, 'whole.json'));
    if (!data.ok) throw new Error(data.error);
    expect(describeRanges(data.data, new Date('2025-08-01T00:00:00Z'))).toMatch(/dated 2025-07-21 \(11 days old\)$/);
    expect(describeRanges(data.data, new Date('2025-11-01T00:00:00Z'))).toMatch(/dated 2025-07-21: STALE \(103 days old, over 90\)/);
    expect(describeRanges(undefined, new Date('2025-08-01T00:00:00Z'))).toMatch(/^provider ranges from the shipped snapshot, dated 2025-07-21/);
  });
});

describe('spoof-checker ranges update without --out: the data the installation uses', () => {
  it('writes $XDG_DATA_HOME/spoof-checker/shared-infrastructure.json, which show, check and scan then read before the snapshot', async () => {
    const xdg = join(work, 'xdg');
    const env = { XDG_DATA_HOME: xdg, HOME: join(work, 'home-unused') };
    const file = join(xdg, 'spoof-checker', 'shared-infrastructure.json');
    expect(userRangesFile(env)).toBe(file);
    // Before: the shipped snapshot, named by its file.
    expect(JSON.parse((await run(['ranges', 'show', '--json'], env)).out)).toMatchObject({ origin: 'shipped snapshot', source: SHIPPED_RANGES_FILE });

    // The EC2 block the zone authorises a /16 of, taken out: the verdict tells which data was read.
    const dir = feedCopy('user-trimmed', (aws) => {
      aws.prefixes = aws.prefixes.filter((p) => p.ip_prefix !== '3.224.0.0/12');
    });
    const updated = await run(['ranges', 'update', '--from', dir], env);
    expect(updated.code).toBe(0);
    expect(updated.out).toBe(`wrote ${file}: provider data dated 2025-07-21\nevery command now reads it in preference to the shipped snapshot (a running serve after a restart)\n`);
    expect(existsSync(file)).toBe(true);
    expect(existsSync(join(work, 'home-unused'))).toBe(false);

    const shown = await run(['ranges', 'show', '--json'], env);
    expect(JSON.parse(shown.out)).toMatchObject({ origin: file, source: file, date: '2025-07-21' });
    expect((await run(['ranges', 'show'], env)).out).toContain(`File: ${file}\n`);
    const checked = await run(['check', '--zones', FIXTURE_ZONES, '--json', 'spf-cloud-ec2.example'], env);
    expect(JSON.parse(checked.out)).toMatchObject({ verdict: 'protected', details: { rule: 'dmarc-reject' } });
    // Without the user data directory: the shipped snapshot, which classifies the block.
    const shipped = await run(['check', '--zones', FIXTURE_ZONES, '--json', 'spf-cloud-ec2.example'], {});
    expect(JSON.parse(shipped.out)).toMatchObject({ verdict: 'spoofable', details: { rule: 'spf-shared-infrastructure' } });
    // --ranges FILE (and SPOOF_CHECKER_RANGES) still win over the user file.
    const flagged = await run(['ranges', 'show', '--json', '--ranges', SHIPPED_RANGES_FILE], env);
    expect(JSON.parse(flagged.out)).toMatchObject({ source: SHIPPED_RANGES_FILE });
  });

  it('without XDG_DATA_HOME (or with a relative one): ~/.local/share/spoof-checker/ under $HOME', async () => {
    const home = join(work, 'home');
    const file = join(home, '.local', 'share', 'spoof-checker', 'shared-infrastructure.json');
    expect(userRangesFile({ HOME: home })).toBe(file);
    expect(userRangesFile({ HOME: home, XDG_DATA_HOME: 'relative/dir' })).toBe(file);
    expect(userRangesFile({})).toBeUndefined();
    const updated = await run(['ranges', 'update', '--from', feedCopy('home')], { HOME: home });
    expect(updated.code).toBe(0);
    expect(JSON.parse((await run(['ranges', 'show', '--json'], { HOME: home })).out)).toMatchObject({ source: file });
  });

  it('offline (every source fails): writes nothing, not even the directory, says so, exit 1 (issue 42)', async () => {
    const xdg = join(work, 'xdg-offline');
    const env = { XDG_DATA_HOME: xdg };
    const nothing = join(work, 'no-feeds');
    mkdirSync(nothing, { recursive: true });
    const updated = await run(['ranges', 'update', '--from', nothing], env);
    expect(updated.code).toBe(1);
    expect(updated.out).toBe('');
    expect(updated.err).toContain(`nothing written to ${join(xdg, 'spoof-checker', 'shared-infrastructure.json')}: every source failed, so there is no new data; the data in use is unchanged`);
    expect(updated.err).not.toMatch(/now reads it/);
    expect(existsSync(join(xdg, 'spoof-checker'))).toBe(false);
    expect(JSON.parse((await run(['ranges', 'show', '--json'], env)).out)).toMatchObject({ source: SHIPPED_RANGES_FILE });
  });

  it('with --out and a file already there: every source failing leaves the file as it was', async () => {
    const out = join(work, 'kept-as-is.json');
    expect((await run(['ranges', 'update', '--from', feedCopy('before-offline'), '--out', out], {})).code).toBe(0);
    const before = readFileSync(out, 'utf8');
    const nothing = join(work, 'no-feeds-2');
    mkdirSync(nothing, { recursive: true });
    const result = await updateRanges({ out, from: nothing, now: new Date(Date.parse('2025-08-01T00:00:00Z')) });
    expect(result.written).toBe(false);
    expect(readFileSync(out, 'utf8')).toBe(before);
  });

  it('an unusable user data file is a usage error that names it and says how to recover', async () => {
    const xdg = join(work, 'xdg-broken');
    mkdirSync(join(xdg, 'spoof-checker'), { recursive: true });
    writeFileSync(join(xdg, 'spoof-checker', 'shared-infrastructure.json'), '{"not": "provider data"}');
    const failed = await run(['check', '--zones', FIXTURE_ZONES, 'p-reject.example'], { XDG_DATA_HOME: xdg });
    expect(failed.code).toBe(2);
    expect(failed.err).toContain(join(xdg, 'spoof-checker', 'shared-infrastructure.json'));
    expect(failed.err).toMatch(/run 'spoof-checker ranges update' again, or delete the file/);
  });

  it('stale data is told in plain words in the result, never as a command to run', async () => {
    const checked = await run(['check', '--zones', FIXTURE_ZONES, '--json', 'spf-cloud-ec2.example'], {});
    const result = JSON.parse(checked.out) as { reasons: { id: string; detail: string }[] };
    const finding = result.reasons.find((f) => f.id === 'spf-shared-infrastructure');
    expect(finding?.detail).toMatch(/The provider data is \d+ days old, dated 2025-07-21/);
    expect(checked.out).not.toContain('ranges update');
  });
});

describe('spoof-checker ranges update over HTTPS (a local server, a test CA)', () => {
  let server: Server;
  let port = 0;
  let ca = '';
  /** What the server answers for a path other than the feed files. */
  const overrides = new Map<string, (res: import('node:http').ServerResponse) => void>();

  beforeAll(async () => {
    const dir = join(work, 'tls');
    execFileSync('mkdir', ['-p', dir]);
    const ssl = (...args: string[]) => {
      try {
        execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
      } catch (error) {
        throw new Error(`openssl is needed to make the test CA (apt-get install openssl): ${(error as Error).message}`);
      }
    };
    ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=spoof-checker test CA');
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
    writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n');
    ssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '2', '-extfile', 'san.ext');
    ca = readFileSync(join(dir, 'ca.crt'), 'utf8');
    server = createServer({ key: readFileSync(join(dir, 'server.key')), cert: readFileSync(join(dir, 'server.crt')) }, (req, res) => {
      const path = decodeURIComponent(new URL(req.url ?? '/', 'https://127.0.0.1').pathname.slice(1));
      const override = overrides.get(path);
      if (override) return override(res);
      try {
        const body = readFileSync(join(FEEDS_DIR, path.split('/').at(-1)!));
        res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(body);
      } catch {
        res.writeHead(404).end('not found');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const urlFor = (prefix = '') => (feed: { file: string }) => `https://127.0.0.1:${port}/${prefix}${feed.file}`;

  it('fetches every feed, builds and writes the data atomically', async () => {
    const out = join(work, 'https.json');
    const result = await updateRanges({ out, fetch: { ca, urlFor: urlFor() } });
    expect(result.providers.map((p) => p.outcome)).toEqual(Array(10).fill('updated'));
    expect(result.written).toBe(true);
    expect(readdirSync(work).filter((f) => f.includes('.tmp'))).toEqual([]);
    const loaded = loadRangesFile(out);
    expect(loaded.ok && loaded.data.sources.find((s) => s.provider === 'aws')?.url).toBe('https://ip-ranges.amazonaws.com/ip-ranges.json');
  });

  it('refuses what fails (HTTP error, broken body, over the size cap, an untrusted certificate, plain HTTP) and keeps the previous data', async () => {
    const out = join(work, 'https-kept.json');
    expect((await updateRanges({ out, fetch: { ca, urlFor: urlFor() } })).written).toBe(true);
    overrides.set('x/aws-ip-ranges.json', (res) => res.writeHead(503).end('busy'));
    overrides.set('x/fastly-ip-ranges.json', (res) => res.writeHead(200).end('{"addresses": ['));
    overrides.set('x/oracle-cloud-ip-ranges.json', (res) => res.writeHead(301, { location: 'http://127.0.0.1/oracle.json' }).end());
    const result = await updateRanges({ out, fetch: { ca, urlFor: urlFor('x/') } });
    const outcome = (id: string) => result.providers.find((p) => p.provider === id)!;
    expect(outcome('aws')).toMatchObject({ outcome: 'kept', detail: expect.stringMatching(/HTTP 503/) });
    expect(outcome('fastly')).toMatchObject({ outcome: 'kept', detail: expect.stringMatching(/does not parse/) });
    expect(outcome('oracle')).toMatchObject({ outcome: 'kept', detail: expect.stringMatching(/is not HTTPS/) });
    expect(outcome('azure').outcome).toBe('updated');
    expect(result.written).toBe(true);

    const capped = await updateRanges({ out, fetch: { ca, urlFor: urlFor(), maxBytes: 100_000 } });
    expect(capped.providers.find((p) => p.provider === 'aws')).toMatchObject({ outcome: 'kept', detail: expect.stringMatching(/over the 100000-byte cap/) });

    // Without the test CA the server's certificate is not trusted: every feed is refused, the old data stays.
    const untrusted = await updateRanges({ out, fetch: { urlFor: urlFor() } });
    expect(untrusted.providers.every((p) => p.outcome === 'kept')).toBe(true);
    expect(untrusted.providers[0]!.detail).toMatch(/certificate/i);
  });

  it('gives up on a feed that does not answer within the timeout', async () => {
    overrides.set('slow/linode.txt', () => {
      /* never answers */
    });
    const result = await updateRanges({ out: join(work, 'https-slow.json'), fetch: { ca, urlFor: urlFor('slow/'), timeoutMs: 300 } });
    expect(result.providers.find((p) => p.provider === 'linode')).toMatchObject({ outcome: 'kept', detail: expect.stringMatching(/took longer than 300 ms/) });
  });
});
