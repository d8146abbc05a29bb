/**
 * Issue 42, item 2: `serve --demo` answers only for the demo's own domains, on every path: the page,
 * the API's check (POST and GET), lookalikes, monitors (API and `monitor add`), batches and report
 * summaries refuse any other name, the fixture stand-ins for real names (google.com, outlook.com)
 * included, with 404 `NOT_IN_DEMO` naming the demo; the demo's domains still answer. A monitor of a
 * demo name that does not exist is accepted, and its state says so (`domain-not-found`), never `ok`.
 * A second monitor of a domain names the first one's id.
 */
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { serve } from '../../src/cli/serve.js';
import { captureIo } from '../cli/helpers.js';
import { floodXml } from '../summaries/helpers.js';

const KEY = 'sk_demo_0123456789abcdef';
let base = '';
let stop: (signal: string) => void = () => undefined;
let exited: Promise<number>;

beforeAll(async () => {
  const stopSignal = new Promise<string>((resolve) => (stop = resolve));
  const err: string[] = [];
  const io: CliIo = { out: () => undefined, err: (t) => void err.push(t), stdin: Readable.from([]), stderrIsTTY: false, env: { LOG_LEVEL: 'silent' }, stopSignal };
  exited = serve(['--demo', '--port', '0'], io);
  for (let i = 0; i < 600 && !/listening on (\S+)/.test(err.join('')); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  base = /listening on (\S+)/.exec(err.join(''))?.[1] ?? '';
  if (base === '') throw new Error(`serve --demo did not start: ${err.join('')}`);
}, 60_000);

afterAll(async () => {
  stop('SIGTERM');
  expect(await exited).toBe(0);
});

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

const TOOLS = '/api/tools/v1';

describe('serve --demo refuses names that are not its own, on every path', () => {
  const outside = ['google.com', 'outlook.com', 'mail.google.com', 'example.com', 'real-bank.com'];

  it.each(outside)('%s: the API check (POST and GET) answers 404 NOT_IN_DEMO naming the demo', async (domain) => {
    for (const answer of [await api('POST', `${TOOLS}/spoof-checker`, { domain }), await api('GET', `${TOOLS}/spoof-checker?domain=${domain}`)]) {
      expect(answer.status).toBe(404);
      expect(answer.json).toMatchObject({ code: 'NOT_IN_DEMO' });
      expect(String(answer.json['message'])).toBe(`${domain} is not in the demo: the demo answers only for its own domains.`);
      expect(String(answer.json['fix'])).toMatch(/p-reject\.example/);
    }
  });

  it('an address or a URL of a real domain is refused the same way, BIMI and transport checks included', async () => {
    for (const body of [{ domain: 'ceo@google.com' }, { domain: 'https://www.google.com/' }, { domain: 'google.com', checks: ['bimi', 'transport'] }]) {
      const answer = await api('POST', `${TOOLS}/spoof-checker`, body);
      expect(answer.status, JSON.stringify(body)).toBe(404);
      expect(answer.json['code']).toBe('NOT_IN_DEMO');
    }
  });

  it('lookalikes, monitors, batches and report summaries refuse it too', async () => {
    const answers = [
      await api('POST', `${TOOLS}/lookalikes`, { domain: 'google.com' }),
      await api('POST', `${TOOLS}/spoof-checker/monitors`, { domain: 'google.com' }),
      await api('POST', `${TOOLS}/spoof-checker/batches`, { domains: ['p-none.example', 'google.com'] }),
      await api('GET', `${TOOLS}/spoof-checker/reports/domains/google.com`),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(404);
      expect(answer.json['code']).toBe('NOT_IN_DEMO');
    }
  });

  it('the page refuses it on each of its result paths', async () => {
    for (const path of ['/check/google.com', '/transport/google.com', '/lookalikes/google.com', '/bimi/google.com']) {
      const response = await fetch(`${base}${path}`);
      await response.text();
      expect(response.status, path).toBe(404);
    }
  });

  it('monitor add google.com is a CLI error naming the demo, exit 1', async () => {
    const { io, stderr } = captureIo();
    io.env['SPOOF_CHECKER_API_KEY'] = KEY;
    expect(await main(['monitor', 'add', 'google.com', '--api', base], io)).toBe(1);
    expect(stderr()).toMatch(/google\.com is not in the demo.*\[NOT_IN_DEMO\]/);
  });

  it("the demo's own domains still answer", async () => {
    const checked = await api('POST', `${TOOLS}/spoof-checker`, { domain: 'p-none.example' });
    expect(checked.status).toBe(200);
    expect(checked.json['verdict']).toBe('spoofable');
    const lookalikes = await api('POST', `${TOOLS}/lookalikes`, { domain: 'acmebank.example' });
    expect(lookalikes.status).toBe(200);
  });
});

describe('report uploads in the demo', () => {
  const begin = Math.floor(Date.now() / 86_400_000) * 86_400 - 2 * 86_400;
  const upload = async (xml: Buffer) => {
    const response = await fetch(`${base}${TOOLS}/spoof-checker/reports`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/xml' }, body: xml });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  const listed = async (reportId: string) => {
    const list = await api('GET', `${TOOLS}/spoof-checker/reports?limit=100`);
    return (list.json['reports'] as { reportId: string }[]).filter((r) => r.reportId === reportId).length;
  };

  it('a report about a domain outside the demo is refused, 404 NOT_IN_DEMO naming it, and nothing is stored', async () => {
    for (const domain of ['google.com', 'Real-Bank.COM']) {
      const reportId = `outside-${domain}`;
      const answer = await upload(floodXml({ domain, records: 2, begin, reportId }));
      expect(answer.status, domain).toBe(404);
      expect(answer.json['code']).toBe('NOT_IN_DEMO');
      expect(String(answer.json['message'])).toBe(`The file holds a report about ${domain.toLowerCase()}, which is not in the demo: the demo takes reports about its own domains only.`);
      expect(String(answer.json['fix'])).toMatch(/p-reject\.example/);
      expect(await listed(reportId)).toBe(0);
    }
  });

  it("a report about one of the demo's domains is still taken", async () => {
    const answer = await upload(floodXml({ domain: 'p-none.example', records: 2, begin, reportId: 'inside-demo' }));
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ stored: 1, reports: [{ domain: 'p-none.example', outcome: 'stored' }] });
    expect(await listed('inside-demo')).toBe(1);
  });
});

describe('monitors in the demo', () => {
  it('a monitor of a domain that does not exist is accepted, and its state says so after each run, never ok', { timeout: 30_000 }, async () => {
    const created = await api('POST', `${TOOLS}/spoof-checker/monitors`, { domain: 'no-such-domain.example' });
    expect(created.status).toBe(201);
    const id = String(created.json['id']);
    let lastCheckedAt: unknown = null;
    for (let run = 1; run <= 3; run++) {
      expect((await api('POST', `${TOOLS}/spoof-checker/monitors/${id}/run`)).status).toBe(202);
      let monitor: Record<string, unknown> = {};
      for (let i = 0; i < 200; i++) {
        monitor = (await api('GET', `${TOOLS}/spoof-checker/monitors/${id}`)).json;
        const checkedAt = (monitor['lastResult'] as { checkedAt?: string } | null)?.checkedAt ?? null;
        if (checkedAt !== null && checkedAt !== lastCheckedAt) {
          lastCheckedAt = checkedAt;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(monitor['lastResult'], `run ${run}`).toMatchObject({ outcome: 'domain-not-found' });
      expect(monitor['state'], `run ${run}`).toMatchObject({ status: 'domain-not-found' });
    }
  });

  it('a second monitor of a domain answers 409 naming the existing monitor by id', async () => {
    const first = await api('POST', `${TOOLS}/spoof-checker/monitors`, { domain: 'reject-sp-none.example' });
    expect(first.status).toBe(201);
    const second = await api('POST', `${TOOLS}/spoof-checker/monitors`, { domain: 'reject-sp-none.example' });
    expect(second.status).toBe(409);
    expect(second.json['code']).toBe('MONITOR_EXISTS');
    expect(String(second.json['message'])).toContain(String(first.json['id']));
    expect(String(second.json['fix'])).toContain(`PATCH /api/tools/v1/spoof-checker/monitors/${String(first.json['id'])}`);
  });
});

describe("docs/cli.md's monitor example works as is against the demo", () => {
  it('every line of the example succeeds, the webhook to a receiver on this machine is accepted', { timeout: 60_000 }, async () => {
    const { readFileSync } = await import('node:fs');
    const cli = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');
    const block = /## `monitor`: monitors from the command line\s+```sh\n([\s\S]*?)```/.exec(cli)?.[1] ?? '';
    const key = /^export SPOOF_CHECKER_API_KEY=(\S+)/m.exec(block)?.[1];
    expect(key).toBe(KEY);
    const commands = block
      .split('\n')
      .filter((line) => line.startsWith('spoof-checker monitor '))
      .map((line) => line.replace(/\s+#.*$/, '').split(/\s+/).slice(1));
    expect(commands.map((c) => c[1])).toEqual(['add', 'list', 'show', 'history', 'run', 'remove']);
    for (const args of commands) {
      const { io, stderr, stdout } = captureIo();
      io.env['SPOOF_CHECKER_API_KEY'] = key!;
      io.env['SPOOF_CHECKER_API_URL'] = base;
      expect(await main(args, io), `${args.join(' ')}: ${stderr()}`).toBe(0);
      if (args[1] === 'add') expect(stdout()).toMatch(/whsec_/);
    }
  });

  it('a webhook off this machine is refused in the demo, with the reason', async () => {
    const refused = await api('POST', `${TOOLS}/spoof-checker/monitors`, { domain: 'p-reject.example', webhookUrl: 'https://203.0.113.9/hook' });
    expect(refused.status).toBe(400);
    expect(refused.json['code']).toBe('WEBHOOK_URL_REFUSED');
    expect(String(refused.json['message'])).toContain('the demo sends webhooks only to this machine');
  });
});
