/**
 * What `serve` says at start about API keys, as a real child process (the built dist/): with no key
 * in the store it says that the API answers 401 and how to give a key; with one it says nothing.
 */
import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { killAll, startServeProcess } from '../setup/serve-process.js';
import { strongDemoSeedFile } from '../setup/strong-seed.js';

/** How long a child may take to print its address (the suite shares two cores). */
const START_TIMEOUT_MS = 30_000;
const children = new Set<ChildProcess>();
afterEach(() => killAll(children));

/** serve in memory, no real DNS (a resolver nobody answers on). */
function start(args: string[], env: NodeJS.ProcessEnv = {}) {
  return startServeProcess(['--port', '0', '--resolver', '127.0.0.1:1', '--data', ':memory:', ...args], { env, startTimeoutMs: START_TIMEOUT_MS, children });
}

describe('serve: the start-up hint about API keys', () => {
  it('with no key: says every /api call answers 401, and names SPOOF_CHECKER_API_KEYS and --seed', async () => {
    const served = await start([]);
    const text = served.stderr();
    expect(text).toContain('no API key is configured: every /api call answers 401');
    expect(text).toContain('SPOOF_CHECKER_API_KEYS="<key>:<organisation id>"');
    expect(text).toContain('--seed FILE');
    // And it is true: the API refuses, the page answers.
    expect((await fetch(`${served.base}/api/tools/v1/spoof-checker?domain=example.com`)).status).toBe(401);
    expect((await fetch(`${served.base}/`)).status).toBe(200);
  });

  it.each([
    ['a key from SPOOF_CHECKER_API_KEYS', [], { SPOOF_CHECKER_API_KEYS: 'sk_hint_test_1f3870be274f6c49b3e31a0c6728957f:org-1' }],
    ['keys from a seed', ['--seed', strongDemoSeedFile()], {}],
  ] as [string, string[], NodeJS.ProcessEnv][])('with %s: no hint', async (_label, args, env) => {
    const served = await start(args, env);
    expect(served.stderr()).toContain('listening on');
    expect(served.stderr()).not.toContain('no API key is configured');
  });
});
