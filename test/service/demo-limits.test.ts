/**
 * Issue 42, item 9: in `serve --demo` one person can open 15 demo result pages in a minute with
 * every section ("Mail sent to you", the BIMI logo, lookalikes) and meet no limit; outside the demo
 * the production limits are unchanged (the 7th lookalike section and the 11th transport-limited
 * section in a minute answer 429).
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { CliIo } from '../../src/cli/io.js';
import { loadDemoSettings } from '../../src/cli/demo.js';
import { DEMO_SCENARIOS_FILE, DEMO_ZONES_DIR, serve } from '../../src/cli/serve.js';
import { DEFAULT_RATE_LIMITS, DEMO_RESULT_PAGES_PER_MINUTE } from '../../src/http/rate-limits.js';

async function served(args: string[]): Promise<{ base: string; stop: () => Promise<number> }> {
  let stop: (signal: string) => void = () => undefined;
  const stopSignal = new Promise<string>((resolve) => (stop = resolve));
  const err: string[] = [];
  const io: CliIo = { out: () => undefined, err: (t) => void err.push(t), stdin: Readable.from([]), stderrIsTTY: false, env: { LOG_LEVEL: 'silent', SPOOF_CHECKER_DATA: ':memory:' }, stopSignal };
  const exited = serve([...args, '--port', '0'], io);
  for (let i = 0; i < 600 && !/listening on (\S+)/.test(err.join('')); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  const base = /listening on (\S+)/.exec(err.join(''))?.[1];
  if (base === undefined) throw new Error(`serve did not start: ${err.join('')}`);
  return {
    base,
    stop: async () => {
      stop('SIGTERM');
      return exited;
    },
  };
}

async function status(url: string): Promise<number> {
  const response = await fetch(url);
  await response.arrayBuffer();
  return response.status;
}

describe('the demo lets a person click around', () => {
  it(`${DEMO_RESULT_PAGES_PER_MINUTE} result pages with every section, no 429`, { timeout: 180_000 }, async () => {
    const demo = await loadDemoSettings(DEMO_SCENARIOS_FILE, DEMO_ZONES_DIR);
    const domains = demo.domains.map((d) => d.input).filter((input) => /^[a-z0-9.-]+$/.test(input)).slice(0, DEMO_RESULT_PAGES_PER_MINUTE);
    expect(domains).toHaveLength(15);
    const server = await served(['--demo']);
    try {
      const statuses: string[] = [];
      for (const domain of domains) {
        for (const path of [`/check/${domain}`, `/transport/${domain}?fragment=1`, `/bimi/${domain}?fragment=1`, `/lookalikes/${domain}?fragment=1`]) {
          const code = await status(`${server.base}${path}`);
          if (code === 429) statuses.push(`${path}: 429`);
        }
      }
      expect(statuses).toEqual([]);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});

describe('outside the demo, the production limits are unchanged', () => {
  it('the defaults are the published ones', () => {
    expect(DEFAULT_RATE_LIMITS.transportCheck.max).toBe(10);
    expect(DEFAULT_RATE_LIMITS.lookalikes.max).toBe(6);
    expect(DEFAULT_RATE_LIMITS.spoofCheck.max).toBe(60);
  });

  it('serve --demo-zones (not the demo): the 7th lookalike section and the 11th transport section in a minute answer 429', { timeout: 120_000 }, async () => {
    const server = await served(['--demo-zones']);
    try {
      const lookalikes: number[] = [];
      for (let i = 0; i < DEFAULT_RATE_LIMITS.lookalikes.max + 1; i++) lookalikes.push(await status(`${server.base}/lookalikes/acmebank.example?fragment=1`));
      expect(lookalikes.slice(0, -1).every((code) => code === 200)).toBe(true);
      expect(lookalikes.at(-1)).toBe(429);
      const transport: number[] = [];
      for (let i = 0; i < DEFAULT_RATE_LIMITS.transportCheck.max + 1; i++) transport.push(await status(`${server.base}/transport/p-none.example?fragment=1`));
      expect(transport.slice(0, -1).every((code) => code === 200)).toBe(true);
      expect(transport.at(-1)).toBe(429);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
