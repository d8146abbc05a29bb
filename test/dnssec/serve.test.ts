/**
 * `serve` over DNS servers validates DNSSEC by default: the API's results carry `dnssec` from the
 * `--trust-anchor` given (the built CLI in a child process, the signed fixtures on the embedded
 * server on loopback). `--no-dnssec` turns it off.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningDnsServer } from '../../packages/engine/src/zones/server.js';
import { killAll, startServeProcess } from '../setup/serve-process.js';
import { ROOT_ANCHOR_FILE, startSignedServer } from '../../packages/engine/test/dnssec/helpers.js';

const KEY = 'sk_dnssec_24c27dbc90548f3517a8ff29cad0285d';
const children = new Set<ChildProcess>();
let dns: RunningDnsServer;
const dirs: string[] = [];

beforeAll(async () => {
  dns = await startSignedServer();
});
afterAll(async () => {
  killAll(children);
  await dns?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function served(extra: string[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'dnssec-serve-'));
  dirs.push(dir);
  const { base } = await startServeProcess(['--resolver', `127.0.0.1:${dns.address.port}`, '--data', dir, '--port', '0', ...extra], {
    env: { SPOOF_CHECKER_API_KEYS: `${KEY}:org-dnssec` },
    startTimeoutMs: 30_000,
    children,
  });
  return base;
}

async function check(base: string, domain: string): Promise<{ dnssec?: { status: string; reason: { code: number | null } } }> {
  const response = await fetch(`${base}/api/tools/v1/spoof-checker`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ domain }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { dnssec?: { status: string; reason: { code: number | null } } };
}

describe('serve --resolver --trust-anchor', () => {
  it('the API result carries dnssec; --no-dnssec says not-checked', async () => {
    const validating = await served(['--trust-anchor', ROOT_ANCHOR_FILE]);
    expect((await check(validating, 'secure-nsec.test')).dnssec?.status).toBe('secure');
    const expired = (await check(validating, 'expired.test')).dnssec;
    expect([expired?.status, expired?.reason.code]).toEqual(['bogus', 7]);
    const off = await served(['--no-dnssec']);
    expect((await check(off, 'secure-nsec.test')).dnssec?.status).toBe('not-checked');
  }, 90_000);
});
