/**
 * `--faults FILE`: the fixture scenarios' DNS faults in the CLI, the demo and `dns-serve`.
 * The file's validation (every problem named with its JSON path), the two shapes it takes, the
 * scoping of a scenario's faults to its own checks, and each command that takes the flag.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dnsServe } from '../../src/cli/dns-serve.js';
import { faultPlanForDomain, faultPlanForEveryCheck, faultPlanForInput, loadFaultPlan, MAX_FAULT_DELAY_MS } from '../../src/cli/faults-file.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { resolverFromFlags } from '../../src/cli/resolver-options.js';
import { UsageError } from '../../src/cli/args.js';
import { NetworkResolver } from '../../packages/engine/src/dns/network-resolver.js';
import { loadScenarios, readGolden, runScenario, SCENARIOS_FILE } from '../../packages/engine/test/corpus/project.js';
import { captureIo, FIXTURE_ZONES } from './helpers.js';

/** A stack trace line, as Node prints one. */
const STACK_LINE = /^\s+at .+[:(]/m;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'faults-file-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Writes `text` to a new file in the test directory and returns its path. */
let written = 0;
async function fileWith(text: string): Promise<string> {
  const path = join(dir, `faults-${++written}.json`);
  await writeFile(path, text);
  return path;
}

const servfail = { kind: 'servfail' };
const rule = (fields: Record<string, unknown>) => JSON.stringify([{ name: '_dmarc.a.example', type: 'TXT', fault: servfail, ...fields }]);

describe('loadFaultPlan: a bad file is refused with its name, the JSON path and what is wrong', () => {
  it.each<[string, string, string]>([
    ['not a list', '{"name": "a.example"}', 'must be a JSON list of fault rules ({ "name", "type", "fault" }) or of scenarios with "faults" (got an object)'],
    ['a rule that is not an object', '[{"name": "a.example", "fault": {"kind": "drop"}}, 7]', '/1 must be a fault rule ({ "name", "type", "fault" }) (got 7)'],
    ['an unknown fault kind', JSON.stringify([1, 2, 3, 4].map((i) => ({ name: `n${i}.example`, fault: i === 4 ? { kind: 'explode' } : servfail }))), '/3/fault/kind must be one of servfail, refused, drop, delay, truncate, malformed (got "explode")'],
    ['a missing fault kind', rule({ fault: {} }), '/0/fault/kind must be one of servfail, refused, drop, delay, truncate, malformed (got nothing)'],
    ['a missing fault', JSON.stringify([{ name: 'a.example' }]), '/0/fault is required: { "kind": servfail | refused | drop | delay | truncate | malformed }'],
    ['a fault that is not an object', rule({ fault: 'servfail' }), '/0/fault must be a fault ({ "kind": … }) (got "servfail")'],
    ['a missing name', JSON.stringify([{ fault: servfail }]), '/0/name is required: the DNS name the fault applies to'],
    ['a name that is not a string', rule({ name: 53 }), '/0/name must be a DNS name such as _dmarc.example.com (got 53)'],
    ['an empty name', rule({ name: '' }), '/0/name must be a DNS name such as _dmarc.example.com (got "")'],
    ['a name with an empty label', rule({ name: 'a..example' }), '/0/name is not a valid DNS name: the name "a..example" has an empty label (two dots in a row, or a leading dot)'],
    ['a label over 63 octets', rule({ name: `${'x'.repeat(64)}.example` }), `/0/name is not a valid DNS name: the label "${'x'.repeat(20)}…" is 64 octets long; DNS allows at most 63`],
    ['a type the engine does not ask', rule({ type: 'SRV' }), '/0/type must be one of SOA, NS, A, AAAA, MX, TXT, CNAME, PTR, or left out for every type (got "SRV")'],
    ['a type in lower case', rule({ type: 'txt' }), '/0/type must be one of SOA, NS, A, AAAA, MX, TXT, CNAME, PTR, or left out for every type (got "txt")'],
    ['a delay without ms', rule({ fault: { kind: 'delay' } }), `/0/fault/ms must be a whole number of milliseconds from 0 to ${MAX_FAULT_DELAY_MS} (got nothing)`],
    ['a fractional delay', rule({ fault: { kind: 'delay', ms: 1.5 } }), `/0/fault/ms must be a whole number of milliseconds from 0 to ${MAX_FAULT_DELAY_MS} (got 1.5)`],
    ['a negative delay', rule({ fault: { kind: 'delay', ms: -1 } }), `/0/fault/ms must be a whole number of milliseconds from 0 to ${MAX_FAULT_DELAY_MS} (got -1)`],
    ['a delay over the limit', rule({ fault: { kind: 'delay', ms: MAX_FAULT_DELAY_MS + 1 } }), `/0/fault/ms must be a whole number of milliseconds from 0 to ${MAX_FAULT_DELAY_MS} (got 60001)`],
    ['a delay as a string', rule({ fault: { kind: 'delay', ms: '10' } }), `/0/fault/ms must be a whole number of milliseconds from 0 to ${MAX_FAULT_DELAY_MS} (got "10")`],
    ['truncate.tcp not a boolean', rule({ fault: { kind: 'truncate', tcp: 'yes' } }), '/0/fault/tcp must be true or false (got "yes")'],
    ['an unknown field of a rule', rule({ ttl: 60 }), '/0/ttl is not an allowed field (allowed: name, type, fault)'],
    ['a field of another kind', rule({ fault: { kind: 'servfail', ms: 10 } }), '/0/fault/ms is not an allowed field for kind servfail (allowed: kind)'],
    ['a JSON pointer escape in a field name', rule({ 'a/b~c': 1 }), '/0/a~1b~0c is not an allowed field (allowed: name, type, fault)'],
    [
      'a bad rule inside a scenario',
      JSON.stringify([{ name: 's1', input: 'a.example' }, { name: 's2', input: 'b.example', faults: [{ name: 'b.example', fault: { kind: 'nope' } }] }]),
      '/1/faults/0/fault/kind must be one of servfail, refused, drop, delay, truncate, malformed (got "nope")',
    ],
    ['a scenario whose faults are not a list', JSON.stringify([{ name: 's', input: 'a.example', faults: { name: 'a.example' } }]), '/0/faults must be a list of fault rules (got an object)'],
    ['a misspelt field of a scenario', JSON.stringify([{ name: 's', input: 'a.example', fualts: [] }]), '/0/fualts is not an allowed field (allowed: name, input, zone, covers, description, selectors, faults)'],
    ['a scenario with faults and no domain', JSON.stringify([{ name: 's', faults: [{ name: 'a.example', fault: servfail }] }]), '/0/input must be the domain the scenario checks, which its faults apply to (got nothing)'],
    [
      'a scenario with faults whose input is not a domain',
      JSON.stringify([{ name: 's', input: '192.0.2.1', faults: [{ name: 'a.example', fault: servfail }] }]),
      '/0/input is not a domain, so its scenario\'s faults would apply to nothing: "192.0.2.1" is an IP address, not a domain name.',
    ],
    ['rules after a scenario', JSON.stringify([{ name: 's', input: 'a.example' }, { name: 'a.example', fault: servfail }]), '/1 is a fault rule, but /0 is a scenario: a file holds one or the other'],
    ['a scenario after rules', JSON.stringify([{ name: 'a.example', fault: servfail }, { name: 's', input: 'a.example' }]), '/1 is a scenario, but /0 is a fault rule: a file holds one or the other'],
  ])('%s', async (_what, text, problem) => {
    const file = await fileWith(text);
    await expect(loadFaultPlan(file)).rejects.toThrow(new UsageError(`${file}: ${problem}`));
  });

  it('a file that cannot be read', async () => {
    const file = join(dir, 'missing.json');
    await expect(loadFaultPlan(file)).rejects.toThrow(new UsageError(`${file}: cannot read the faults file (ENOENT: no such file or directory, open '${file}')`));
  });

  it.each<[string, string, RegExp]>([
    ['cut short', '[{"name": "x"', /^not valid JSON \(.*at position 13 \(line 1 column 14\)\)$/],
    ['on a later line', '[\n  {"name": "x",\n   name: 1}]', /^not valid JSON \(.*at position 21 \(line 3 column 4\)\)$/],
    ['a trailing comma, quoted on one line', '[1,\n2,]', /^not valid JSON \(Unexpected token '\]', "\[1, 2,\]" is not valid JSON\)$/],
    ['empty', '', /^not valid JSON \(Unexpected end of JSON input\)$/],
  ])('JSON that does not parse (%s): the parser\'s message and position, on one line', async (_what, text, message) => {
    const file = await fileWith(text);
    const error = await loadFaultPlan(file).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsageError);
    const text0 = (error as Error).message;
    expect(text0.startsWith(`${file}: `)).toBe(true);
    expect(text0.slice(file.length + 2)).toMatch(message);
    expect(text0).not.toContain('\n');
  });
});

describe('loadFaultPlan: the two shapes', () => {
  it('a list of rules: every rule, in order, for every check', async () => {
    const rules = [
      { name: '_dmarc.a.example', type: 'TXT', fault: { kind: 'servfail' } },
      { name: 'A.Example.', fault: { kind: 'refused' } },
      { name: 'b.example', type: 'MX', fault: { kind: 'drop' } },
      { name: 'c.example', fault: { kind: 'delay', ms: 0 } },
      { name: 'd.example', fault: { kind: 'delay', ms: MAX_FAULT_DELAY_MS } },
      { name: 'e.example', fault: { kind: 'truncate' } },
      { name: 'f.example', fault: { kind: 'truncate', tcp: true } },
      { name: 'g.example', type: 'AAAA', fault: { kind: 'malformed' } },
    ];
    const loaded = await loadFaultPlan(await fileWith(JSON.stringify(rules)));
    expect(loaded).toEqual({ shape: 'rules', plan: rules });
    expect(faultPlanForEveryCheck(loaded)).toEqual(rules);
    expect(faultPlanForInput(loaded, 'unrelated.example')).toEqual(rules);
  });

  it('an empty list: no faults', async () => {
    expect(await loadFaultPlan(await fileWith('[]'))).toEqual({ shape: 'rules', plan: [] });
  });

  it('a list of scenarios: every scenario\'s rules, each for the checks of its own domain', async () => {
    const scenarios = [
      { name: 'quiet', input: 'quiet.example', zone: 'quiet.example.zone', covers: [], description: 'no faults' },
      { name: 'one', input: 'https://One.example/path', faults: [{ name: '_dmarc.one.example', type: 'TXT', fault: { kind: 'servfail' } }] },
      { name: 'two', input: 'postmaster@two.example', faults: [{ name: '_spf.shared.example', fault: { kind: 'drop' } }, { name: 'two.example', type: 'MX', fault: { kind: 'refused' } }] },
    ];
    const loaded = await loadFaultPlan(await fileWith(JSON.stringify(scenarios)));
    expect(loaded).toEqual({
      shape: 'scenarios',
      plan: [
        { name: '_dmarc.one.example', type: 'TXT', fault: { kind: 'servfail' }, scope: 'one.example' },
        { name: '_spf.shared.example', fault: { kind: 'drop' }, scope: 'two.example' },
        { name: 'two.example', type: 'MX', fault: { kind: 'refused' }, scope: 'two.example' },
      ],
    });
    expect(faultPlanForEveryCheck(loaded)).toEqual([]);
    expect(faultPlanForInput(loaded, 'ONE.example.').map((r) => r.name)).toEqual(['_dmarc.one.example']);
    expect(faultPlanForInput(loaded, 'mail.two.example').map((r) => r.name)).toEqual(['_spf.shared.example', 'two.example']);
    // The shared include's fault stays with its scenario: another domain that includes it is untouched.
    expect(faultPlanForDomain(loaded, 'quiet.example')).toEqual([]);
    expect(faultPlanForInput(loaded, 'not..a domain')).toEqual([]);
  });

  it('the real fixtures/scenarios.json: every scenario\'s rules, scoped to its input', async () => {
    const scenarios = await loadScenarios();
    const loaded = await loadFaultPlan(SCENARIOS_FILE);
    const expected = scenarios.flatMap((scenario) => (scenario.faults ?? []).map((rule) => ({ ...rule, scope: scenario.input })));
    expect(expected.length).toBeGreaterThanOrEqual(9);
    expect(loaded).toEqual({ shape: 'scenarios', plan: expected });
  });
});

describe('resolverFromFlags({ faults })', () => {
  it('every corpus scenario, checked through the CLI\'s resolver with the scenarios file, gives its golden', async () => {
    const built = await resolverFromFlags({ zones: FIXTURE_ZONES, faults: SCENARIOS_FILE });
    expect(built.description).toMatch(/^\d+ zone\(s\) from .*fixtures\/zones\/; 9 DNS fault\(s\) from .*fixtures\/scenarios\.json, each for its scenario$/);
    const scenarios = await loadScenarios();
    const faulted = scenarios.filter((scenario) => (scenario.faults ?? []).length > 0);
    expect(faulted.length).toBeGreaterThanOrEqual(8);
    for (const scenario of scenarios) {
      // The scenario's faults come from the file, through the resolver the CLI builds, not from the test.
      const projection = await runScenario(scenario, built.resolverFor(scenario.input), { applyFaults: false });
      expect(projection, scenario.name).toEqual(await readGolden(scenario.name));
    }
  });

  it('a list of rules applies to every check; without --faults, nothing is injected', async () => {
    const file = await fileWith(JSON.stringify([{ name: '_dmarc.p-reject.example', type: 'TXT', fault: { kind: 'refused' } }]));
    const faulty = await resolverFromFlags({ zones: FIXTURE_ZONES, faults: file });
    expect(faulty.description).toMatch(new RegExp(`; 1 DNS fault\\(s\\) from ${file}$`));
    expect(await faulty.resolver.resolve('_dmarc.p-reject.example', 'TXT')).toMatchObject({ kind: 'error', reason: 'refused' });
    expect(await faulty.resolverFor('anything.example').resolve('_dmarc.p-reject.example', 'TXT')).toMatchObject({ kind: 'error', reason: 'refused' });
    expect(await faulty.resolver.resolve('_dmarc.p-reject.example', 'MX')).toMatchObject({ kind: 'nodata' });
    // scan reads the zones themselves: they stay reachable, without the faults.
    expect(await faulty.zones?.resolve('_dmarc.p-reject.example', 'TXT')).toMatchObject({ kind: 'records' });
    const plain = await resolverFromFlags({ zones: FIXTURE_ZONES });
    expect(plain.description).not.toContain('fault');
    expect(await plain.resolverFor('p-reject.example').resolve('_dmarc.p-reject.example', 'TXT')).toMatchObject({ kind: 'records' });
  });

  it('wraps real servers too: a faulted name never reaches the network', async () => {
    const file = await fileWith(JSON.stringify([{ name: 'a.example', fault: { kind: 'drop' } }]));
    // Port 9 on loopback: nothing answers, so a query that went out would end in a refusal or a
    // timeout after 5 s; the injected fault answers at once (a wide margin on any machine).
    const built = await resolverFromFlags({ resolver: '127.0.0.1:9', timeout: '5000', faults: file });
    expect(built.description).toBe(`the DNS server 127.0.0.1:9; 1 DNS fault(s) from ${file}`);
    const started = Date.now();
    expect(await built.resolver.resolve('a.example', 'TXT')).toEqual({ kind: 'error', reason: 'timeout', detail: 'injected fault: the query was dropped' });
    expect(Date.now() - started).toBeLessThan(2500);
  });
});

describe('spoof-checker check --faults', () => {
  const servfail = ['check', 'dmarc-servfail.example', '--zones', FIXTURE_ZONES];

  it('reports the injected DNS failure, not a verdict, and exits 1 (an input could not be checked)', async () => {
    const { io, stdout, stderr } = captureIo();
    expect(await main([...servfail, '--faults', SCENARIOS_FILE], io)).toBe(EXIT_FAILED);
    expect(stdout()).toBe(
      'dmarc-servfail.example: cannot check (dns_failure)\n' +
        '  The DNS lookup of the DMARC record (TXT _dmarc.dmarc-servfail.example) failed (SERVFAIL): injected\n' +
        "  fault. Check the domain's DNS servers: they answered with an error.\n",
    );
    expect(stderr()).toBe('');
  });

  it('gives each input its own scenario\'s faults, in --json too', async () => {
    const { io, stdout } = captureIo();
    const inputs = ['dmarc-timeout.example', 'p-none.example', 'https://mx-servfail.example/', 'include-timeout-none.example'];
    expect(await main(['check', ...inputs, '--zones', FIXTURE_ZONES, '--faults', SCENARIOS_FILE, '--json'], io)).toBe(EXIT_FAILED);
    const lines = stdout().trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ input: 'dmarc-timeout.example', error: { code: 'dns_timeout' } });
    expect(lines[1]).toMatchObject({ domain: 'p-none.example', verdict: 'spoofable' });
    expect(JSON.stringify(lines[1])).not.toContain('injected fault');
    expect(lines[2]).toMatchObject({ domain: 'mx-servfail.example', verdict: 'protected' });
    expect(JSON.stringify(lines[2])).toContain('injected fault');
    expect(lines[3]).toMatchObject({ domain: 'include-timeout-none.example', verdict: 'spoofable' });
    expect(JSON.stringify(lines[3])).toContain('injected fault: the query was dropped');
  });

  it('without --faults the same name gets the zone\'s verdict (the zones hold no failure)', async () => {
    const { io, stdout } = captureIo();
    expect(await main(servfail, io)).toBe(EXIT_OK);
    expect(stdout()).toMatch(/^dmarc-servfail\.example: protected \(forged mail is rejected\)\n/);
  });

  it('a bad faults file: exit 2, the file and the problem on one line, then where the help is', async () => {
    const file = await fileWith(JSON.stringify([{ name: 'a.example', fault: { kind: 'explode' } }]));
    const { io, stdout, stderr } = captureIo();
    expect(await main([...servfail, '--faults', file], io)).toBe(EXIT_USAGE);
    expect(stdout()).toBe('');
    expect(stderr()).toBe(
      `spoof-checker check: ${file}: /0/fault/kind must be one of servfail, refused, drop, delay, truncate, malformed (got "explode")\n` +
        "Run 'spoof-checker check --help' for the options.\n",
    );
    expect(stderr()).not.toMatch(STACK_LINE);
  });

  it('lists --faults in its help', async () => {
    const { io, stdout } = captureIo();
    expect(await main(['check', '--help'], io)).toBe(EXIT_OK);
    expect(stdout()).toMatch(/^ {2}--faults FILE {8}inject the DNS faults listed in FILE/m);
  });
});

describe('spoof-checker scan --faults', () => {
  it('streams each name with its scenario\'s faults', async () => {
    const { io, stdout, stderr } = captureIo('dmarc-refused.example\np-reject.example\n');
    expect(await main(['scan', '-', '--zones', FIXTURE_ZONES, '--faults', SCENARIOS_FILE], io)).toBe(EXIT_FAILED);
    const lines = new Map(
      stdout()
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as { input: string })
        .map((line) => [line.input, line]),
    );
    expect(lines.get('dmarc-refused.example')).toMatchObject({ error: { code: 'dns_failure', message: expect.stringContaining('REFUSED') } });
    expect(lines.get('p-reject.example')).toMatchObject({ verdict: 'protected' });
    expect(stderr()).not.toMatch(STACK_LINE);
  });

  it('a bad faults file: exit 2 and one line', async () => {
    const file = join(dir, 'absent.json');
    const { io, stderr } = captureIo('p-reject.example\n');
    expect(await main(['scan', '-', '--zones', FIXTURE_ZONES, '--faults', file], io)).toBe(EXIT_USAGE);
    expect(stderr()).toBe(`spoof-checker scan: ${file}: cannot read the faults file (ENOENT: no such file or directory, open '${file}')\n`);
  });
});

describe('spoof-checker worker --faults', () => {
  it('refuses a bad faults file (one line naming it, then the usage) before it reaches the store or Redis', async () => {
    const file = await fileWith('[{"name": "a.example", "fault": {"kind": "delay", "ms": 1e9}}]');
    const { io, stderr } = captureIo();
    const code = await main(['worker', '--redis', 'redis://127.0.0.1:1', '--data', join(dir, 'store'), '--zones', FIXTURE_ZONES, '--faults', file], io);
    expect(code).toBe(EXIT_USAGE);
    const [problem, blank, usage] = stderr().split('\n');
    expect(problem).toBe(`spoof-checker worker: ${file}: /0/fault/ms must be a whole number of milliseconds from 0 to ${MAX_FAULT_DELAY_MS} (got 1000000000)`);
    expect([blank, usage]).toEqual(['', expect.stringMatching(/^Usage: spoof-checker worker .*\[--faults FILE\]/)]);
    expect(stderr()).not.toMatch(STACK_LINE);
  });
});

describe('spoof-checker dns-serve --faults: the faults on the wire', () => {
  /** dns-serve in-process, stopped by the test. */
  async function startDnsServe(args: string[]) {
    let resolveStop: (signal: string) => void = () => {};
    const { io, stdout, stderr } = captureIo('', { stop: new Promise((resolve) => (resolveStop = resolve)) });
    const exit = dnsServe(args, io);
    let early: number | undefined;
    void exit.then((code) => (early = code));
    const started = Date.now();
    while (!stdout().includes('listening on') && early === undefined) {
      if (Date.now() - started > 5000) throw new Error(`dns-serve did not start: ${stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    if (early !== undefined) throw new Error(`dns-serve exited ${early}: ${stderr()}`);
    const port = Number(/listening on 127\.0\.0\.1:(\d+)/.exec(stdout())?.[1]);
    return { port, stdout, exit, stop: () => resolveStop('SIGTERM') };
  }

  it('answers SERVFAIL, REFUSED or nothing where the file says, and normally elsewhere', async () => {
    const server = await startDnsServe([FIXTURE_ZONES, '--port', '0', '--faults', SCENARIOS_FILE]);
    try {
      expect(server.stdout()).toMatch(/ zones, names outside them REFUSED, 9 DNS fault\(s\) from .*scenarios\.json\n$/);
      const client = new NetworkResolver({ servers: [`127.0.0.1:${server.port}`], timeoutMs: 300, attempts: 1 });
      expect(await client.resolve('_dmarc.dmarc-servfail.example', 'TXT')).toMatchObject({ kind: 'error', reason: 'servfail' });
      expect(await client.resolve('_dmarc.dmarc-refused.example', 'TXT')).toMatchObject({ kind: 'error', reason: 'refused' });
      expect(await client.resolve('_dmarc.dmarc-timeout.example', 'TXT')).toMatchObject({ kind: 'error', reason: 'timeout' });
      // Only the faulted type: the MX of the same name answers.
      expect(await client.resolve('mx-servfail.example', 'MX')).toMatchObject({ kind: 'error', reason: 'servfail' });
      expect(await client.resolve('mx-servfail.example', 'TXT')).toMatchObject({ kind: 'records' });
      expect(await client.resolve('_dmarc.p-none.example', 'TXT')).toEqual(expect.objectContaining({ kind: 'records', records: [['v=DMARC1; p=none; rua=mailto:dmarc-reports@p-none.example']] }));
    } finally {
      server.stop();
    }
    expect(await server.exit).toBe(EXIT_OK);
  });

  it('without --faults the start-up line names none, and the name answers', async () => {
    const server = await startDnsServe([FIXTURE_ZONES, '--port', '0']);
    try {
      expect(server.stdout()).not.toContain('fault');
      const client = new NetworkResolver({ servers: [`127.0.0.1:${server.port}`], timeoutMs: 300, attempts: 1 });
      expect(await client.resolve('_dmarc.dmarc-servfail.example', 'TXT')).toMatchObject({ kind: 'records' });
    } finally {
      server.stop();
    }
    expect(await server.exit).toBe(EXIT_OK);
  });

  it('a bad faults file: exit 2, one line, nothing listens', async () => {
    const file = await fileWith('[{"name": "a.example", "type": "ANY", "fault": {"kind": "servfail"}}]');
    const { io, stdout, stderr } = captureIo();
    expect(await dnsServe([FIXTURE_ZONES, '--port', '0', '--faults', file], io)).toBe(EXIT_USAGE);
    expect(stdout()).toBe('');
    expect(stderr()).toBe(`dns-serve: ${file}: /0/type must be one of SOA, NS, A, AAAA, MX, TXT, CNAME, PTR, or left out for every type (got "ANY")\n`);
  });
});
