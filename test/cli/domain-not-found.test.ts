import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { captureIo, FIXTURE_ZONES } from './helpers.js';

describe('spoof-checker check on a domain that does not exist', () => {
  it('prints an error naming the domain and exits 1', async () => {
    const { io, stdout, stderr } = captureIo();
    const code = await main(['check', 'no-such-domain.example', '--zones', FIXTURE_ZONES], io);
    expect(code).toBe(1);
    expect(`${stdout()}${stderr()}`).toMatch(/no-such-domain\.example.*domain_not_found.*The domain no-such-domain\.example does not exist/s);
    expect(stdout()).not.toMatch(/spoofable|protected/);
  });

  it('gives a JSON error line with the domain_not_found code, beside the verdicts of the other inputs', async () => {
    const { io, stdout } = captureIo();
    const code = await main(['check', 'www.no-such-domain.example', 'p-reject.example', '--zones', FIXTURE_ZONES, '--json'], io);
    expect(code).toBe(1);
    const lines = stdout().trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(lines[0]).toEqual({ input: 'www.no-such-domain.example', error: { code: 'domain_not_found', message: expect.stringMatching(/no-such-domain\.example .*does not exist/) } });
    expect(lines[1]).toMatchObject({ domain: 'p-reject.example', verdict: 'protected' });
  });
});
