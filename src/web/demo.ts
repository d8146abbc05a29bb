/**
 * The page in demo mode (`serve --demo`): the answers come from fixture zone files, not from public
 * DNS, and the page says so on every page (a banner), lists the domains the demo can answer for
 * (each a link), gives form examples that work in the demo, and answers "not in the demo" for any
 * other name instead of a verdict made up from stand-in records.
 */
import { canonicalName } from '@spoof-checker/engine';
import { normaliseDomainInput } from '@spoof-checker/engine';
import { html, type SafeHtml } from './html.js';

/** One name the demo answers for. */
export interface DemoDomain {
  /** As typed: a domain, an address or a URL (what the form would get). */
  input: string;
  /** What it shows, in a few words. */
  note: string;
}

/** What the page needs to know about the demo. */
export interface DemoSettings {
  /** Where the answers come from, in words ("the fixture zones in fixtures/zones"). */
  source: string;
  /** The names to try, the first few shown first. */
  domains: readonly DemoDomain[];
  /** How many of `domains` are shown before "all of them". */
  featured: number;
  /**
   * The zones the demo's scenarios live in: a name at or below one of these is "in the demo". Zones
   * that stand in for real providers (google.com…) are not listed: the demo does not answer for them.
   */
  zoneOrigins: readonly string[];
  /**
   * Zones of real names that stand in for providers the demo's domains refer to (google.com,
   * outlook.com…): listed as stand-ins, never checked (their records are not the providers' DNS).
   */
  standIns?: readonly string[];
}

/** Whether the demo answers for `domain` (an A-label name, as normalised). */
export function inDemo(demo: DemoSettings, domain: string): boolean {
  const name = canonicalName(domain);
  return demo.zoneOrigins.some((origin) => {
    const zone = canonicalName(origin);
    return name === zone || name.endsWith(`.${zone}`);
  });
}

/** Where a demo input's result page is (the form's canonical redirect target), or null for an input the form refuses. */
export function demoHref(input: string): string | null {
  const normalised = normaliseDomainInput(input);
  return normalised.ok ? `/check/${encodeURIComponent(normalised.domain)}` : null;
}

/** The banner every page of the demo carries. */
export function demoBanner(demo: DemoSettings): SafeHtml {
  return html`<div class="demo-banner" role="note" id="demo-banner"><div class="wrap">
<p><strong>Demo.</strong> The answers come from ${demo.source}, not from public DNS: the domains are made up for the demo, and only they can be checked. <a href="/#demo-domains">Domains to try</a></p>
</div></div>`;
}

/**
 * Up to three form examples that work in the demo: a domain, an email address, a website (the
 * website's host with a bare path, shorter than the scenario's URL and checked the same).
 */
export function demoExamples(demo: DemoSettings): string[] {
  const usable = demo.domains.map((d) => d.input).filter((input) => demoHref(input) !== null);
  const domain = usable.find((input) => /^[a-z0-9.-]+$/i.test(input));
  const address = usable.find((input) => input.includes('@'));
  const url = usable.find((input) => /^https?:\/\//i.test(input));
  const host = url === undefined ? undefined : normaliseDomainInput(url);
  const website = host?.ok ? `https://${host.domain}/` : undefined;
  return [domain, address, website].filter((e): e is string => e !== undefined);
}

/** The list of domains to try (home page and the "not in the demo" page). */
export function demoDomainsSection(demo: DemoSettings, headingLevel: 'h2' | 'h3' = 'h2'): SafeHtml {
  const links = demo.domains.flatMap((d) => {
    const href = demoHref(d.input);
    return href === null ? [] : [{ ...d, href }];
  });
  const item = (d: { input: string; note: string; href: string }) => html`<li><a href="${d.href}"><code>${d.input}</code></a> <span class="muted">${d.note}</span></li>`;
  const featured = links.slice(0, demo.featured);
  const rest = links.slice(demo.featured);
  const heading = headingLevel === 'h2' ? html`<h2 id="demo-domains">Domains to try in the demo</h2>` : html`<h3 id="demo-domains">Domains to try in the demo</h3>`;
  return html`<section class="demo-domains" aria-labelledby="demo-domains">
${heading}
<ul class="demo-list">${featured.map(item)}</ul>
${rest.length > 0 ? html`<details><summary>All ${links.length} demo domains</summary><ul class="demo-list">${rest.map(item)}</ul></details>` : null}
${demo.standIns && demo.standIns.length > 0 ? html`<p class="muted" id="demo-stand-ins"><strong>Stand-ins, not checked:</strong> ${demo.standIns.map((name, i) => html`${i > 0 ? ', ' : ''}<code>${name}</code>`)}. These zone files hold only the few records the demo domains point at (an MX host, an SPF include, a DKIM key); they stand in for those providers and are not their DNS, so the demo gives no verdict for them.</p>` : null}
</section>`;
}
