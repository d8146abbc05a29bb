/**
 * Shared set-up of the page tests: an app whose check is the real `checkDomain` over the fixture
 * zones (optionally with DNS faults), and small readers of the rendered HTML.
 */
import { existsSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import axe from 'axe-core';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildApp, type AppOptions } from '../../src/service/compose.js';
import { checkDomain } from '../../packages/engine/src/check.js';
import { FaultyResolver, type FaultPlan } from '../../packages/engine/src/dns/faults.js';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import type { Resolver } from '../../packages/engine/src/dns/types.js';
import { createMemoryStores } from '../../src/store/memory.js';
import type { RecordLog, Stores } from '../../src/store/types.js';
import { loadZoneDirectory } from '../../packages/engine/src/zones/load.js';

export const ZONES_DIR = new URL('../../fixtures/zones/', import.meta.url).pathname;
export const API_KEY = 'sk_web_test_73022e2626b13c67a89e7153bcc9b5e0';

let zones: Promise<ZoneResolver> | undefined;
/** The fixture zones, loaded once per test file. */
export function fixtureResolver(): Promise<ZoneResolver> {
  zones ??= loadZoneDirectory(ZONES_DIR).then((loaded) => new ZoneResolver(loaded));
  return zones;
}

/** An app over the fixture zones with the real engine; every record log append is captured. */
export async function fixtureApp(
  options: { faults?: FaultPlan; overrides?: Partial<AppOptions> } = {},
): Promise<{ app: FastifyInstance; stores: Stores; appended: RecordLog[] }> {
  const zoneResolver = await fixtureResolver();
  const resolver: Resolver = options.faults ? new FaultyResolver(zoneResolver, options.faults) : zoneResolver;
  const stores = createMemoryStores();
  const appended: RecordLog[] = [];
  const append = stores.recordLogs.append.bind(stores.recordLogs);
  stores.recordLogs.append = async (organizationId, record) => {
    appended.push(record);
    await append(organizationId, record);
  };
  const app = await buildApp({
    stores,
    check: (domain) => checkDomain(domain, { resolver }),
    apiKeys: [{ key: API_KEY, organizationId: 'org_web' }],
    rateLimits: false,
    ...options.overrides,
  });
  return { app, stores, appended };
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#96': '`', nbsp: '\u00a0' };

/**
 * The markup without the spans that keep hyphenated words whole (src/web/html.ts
 * `keepHyphenatedWhole`): they are inline and add no text, so `p<span class="nh">-n</span>one` reads
 * `p-none`.
 */
export function withoutHyphenSpans(markup: string): string {
  return markup.replace(/<span class="nh">([^<]*)<\/span>/g, '$1').replace(/<span class="nb">([^<]*)<\/span>/g, '$1');
}

/** Text with the tags stripped and the entities the `html` helper writes decoded, whitespace collapsed. */
export function textContent(markup: string): string {
  return withoutHyphenSpans(markup)
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(amp|lt|gt|quot|#39|#96|nbsp);/g, (_all, name: string) => ENTITIES[name] ?? '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The inner HTML of the first element with this id (elements of the same tag nested inside are handled). */
export function innerById(markup: string, id: string): string | null {
  const open = new RegExp(`<([a-z0-9]+)[^>]*\\sid="${id}"[^>]*>`, 'i').exec(markup);
  if (!open) return null;
  const tag = open[1]!.toLowerCase();
  let depth = 1;
  const pattern = new RegExp(`<(/?)${tag}\\b[^>]*>`, 'gi');
  pattern.lastIndex = open.index + open[0].length;
  for (let match = pattern.exec(markup); match; match = pattern.exec(markup)) {
    depth += match[1] ? -1 : 1;
    if (depth === 0) return markup.slice(open.index + open[0].length, match.index);
  }
  return null;
}

/** The text of the element with this id, or null. */
export function textById(markup: string, id: string): string | null {
  const inner = innerById(markup, id);
  return inner === null ? null : textContent(inner);
}

/** The decoded text of every `<pre><code>` block. */
export function codeBlocks(markup: string): string[] {
  return [...markup.matchAll(/<pre[^>]*><code>([\s\S]*?)<\/code><\/pre>/g)].map((m) => textContent(m[1]!));
}

/** Every `src` and `href` attribute value. */
export function linkedUrls(markup: string): string[] {
  return [...markup.matchAll(/\s(?:src|href|action)="([^"]*)"/g)].map((m) => m[1]!);
}

/** Debian's Chromium: the browser tests drive it through playwright-core, never a downloaded browser. */
export const CHROMIUM = '/usr/bin/chromium';
/** Headless on a machine without a GPU or a sandbox, and nothing that reaches the network on its own. */
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Launches Chromium, or fails naming the Debian package when it is missing (never skips). */
export async function launchChromium(options: { backForwardCache?: boolean } = {}): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: the browser tests need Debian's Chromium (apt-get install chromium).`);
  // Playwright turns the back-forward cache off by default; a test of what Back shows turns it on, as a person's browser has it.
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, ...(options.backForwardCache ? { ignoreDefaultArgs: ['--disable-back-forward-cache'] } : {}) });
}

/** Every axe-core violation on the current page, whatever its impact, one line each (its rule, impact and nodes). */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(axe.source);
  const results = await page.evaluate<{ violations: { id: string; impact: string | null; nodes: { target: unknown }[] }[] }>("axe.run(document, { resultTypes: ['violations'] })");
  return results.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
}
