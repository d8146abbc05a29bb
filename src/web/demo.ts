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
   * Domains whose "Mail sent to you" answers from the demo's own mail servers (`serve --demo`
   * starts them on loopback), one per transport verdict; listed apart on the home page.
   */
  transportDomains?: readonly DemoDomain[];
  /**
   * Zones of real names that stand in for providers the demo's domains refer to (google.com,
   * outlook.com…): listed as stand-ins, never checked (their records are not the providers' DNS).
   */
  standIns?: readonly string[];
  /**
   * The DNSSEC demo domains (secure, bogus, insecure), validated against the demo's own trust anchor
   * (named in `anchor`, never the IANA root's); listed apart on the home page.
   */
  dnssec?: { domains: readonly DemoDomain[]; anchor: string };
  /** The BIMI demo domains and the demo Mark Verifying Authority their certificates chain to (trusted by the demo only). */
  bimi?: { domains: readonly DemoDomain[]; authority: string };
  /** Domains whose DMARC and TLS reports the demo stores for its organisation (the API's report routes, with the demo key). */
  reports?: readonly DemoDomain[];
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
  // A labelled region (a landmark), so that its text is not outside every landmark (axe: region).
  return html`<section class="demo-banner" aria-label="About this demo" id="demo-banner"><div class="wrap">
<p><strong>Demo.</strong> The answers come from ${demo.source}, not from public DNS: the domains are made up for the demo, and only they can be checked. <a href="/#demo-domains">Domains to try</a></p>
</div></section>`;
}

/** The domain an input is checked as, or null for an input the form refuses. */
function domainOf(input: string): string | null {
  const normalised = normaliseDomainInput(input);
  return normalised.ok ? normalised.domain : null;
}

/**
 * Up to three form examples that work in the demo, each for a different domain: a domain, an email
 * address, a website (a demo domain's home page: `https://<domain>/`).
 */
export function demoExamples(demo: DemoSettings): string[] {
  const usable = demo.domains.map((d) => d.input).filter((input) => demoHref(input) !== null);
  const plain = [...new Set(usable.filter((input) => /^[a-z0-9.-]+$/.test(input)).map((input) => domainOf(input)!))];
  const domain = plain[0];
  if (domain === undefined) return [];
  const taken = new Set([domain]);
  const addressInput = usable.find((input) => input.includes('@') && !taken.has(domainOf(input) ?? domain));
  const fresh = () => plain.find((name) => !taken.has(name));
  const address = addressInput ?? (fresh() === undefined ? undefined : `ceo@${fresh()}`);
  if (address !== undefined) taken.add(domainOf(address) ?? domain);
  const websiteDomain = fresh();
  const website = websiteDomain === undefined ? undefined : `https://${websiteDomain}/`;
  return [domain, address, website].filter((e): e is string => e !== undefined);
}

/** The list of domains to try (home page and the "not in the demo" page). */
export function demoDomainsSection(demo: DemoSettings, headingLevel: 'h2' | 'h3' = 'h2'): SafeHtml {
  // Each result page once: an address or a spelling of a domain already listed leads to the same page.
  const seen = new Set<string>();
  const links = demo.domains.flatMap((d, index) => {
    const href = demoHref(d.input);
    if (href === null || seen.has(href)) return [];
    seen.add(href);
    return [{ ...d, href, featured: index < demo.featured }];
  });
  const item = (d: { input: string; note: string; href: string }) => html`<li><a href="${d.href}"><code>${d.input}</code></a> <span class="muted">${d.note}</span></li>`;
  const featured = links.filter((d) => d.featured);
  const rest = links.filter((d) => !d.featured);
  const heading = headingLevel === 'h2' ? html`<h2 id="demo-domains">Domains to try in the demo</h2>` : html`<h3 id="demo-domains">Domains to try in the demo</h3>`;
  const transport = (demo.transportDomains ?? []).flatMap((d) => {
    const href = demoHref(d.input);
    return href === null ? [] : [{ ...d, href: `/transport/${encodeURIComponent(d.input)}` }];
  });
  return html`<section class="demo-domains" aria-labelledby="demo-domains">
${heading}
<ul class="demo-list">${featured.map(item)}</ul>
${rest.length > 0 ? html`<details><summary>All ${links.length} demo domains</summary><ul class="demo-list">${rest.map(item)}</ul></details>` : null}
${transport.length > 0 ? html`<p id="demo-transport">Mail sent to you (MTA-STS, TLS-RPT, STARTTLS): these answer from the demo's own mail servers on this machine.</p>
<ul class="demo-list" aria-labelledby="demo-transport">${transport.map(item)}</ul>` : null}
${demo.dnssec && demo.dnssec.domains.length > 0 ? html`<p id="demo-dnssec">DNSSEC (and DANE): these are signed under a demo root and validated against ${demo.dnssec.anchor}; nothing outside the demo trusts that key.</p>
<ul class="demo-list" aria-labelledby="demo-dnssec">${demo.dnssec.domains.flatMap((d) => {
    const href = demoHref(d.input);
    return href === null ? [] : [item({ ...d, href })];
  })}</ul>` : null}
${demo.bimi && demo.bimi.domains.length > 0 ? html`<p id="demo-bimi">BIMI (the brand logo): the logo's mark certificate is issued by the demo's own authority, <q>${demo.bimi.authority}</q>, a demo authority that only this demo trusts, and only for its own domains.</p>
<ul class="demo-list" aria-labelledby="demo-bimi">${demo.bimi.domains.map((d) => html`<li><a href="/bimi/${encodeURIComponent(d.input)}"><code>${d.input}</code></a> <span class="muted">${d.note}</span></li>`)}</ul>` : null}
${demo.reports && demo.reports.length > 0 ? html`<p id="demo-reports">DMARC and TLS reports: the demo stores a day of reports for these, for its organisation; read them with the demo key at <code>GET /api/tools/v1/spoof-checker/reports/domains/&lt;domain&gt;</code> (readiness, senders, TLS).</p>
<ul class="demo-list" aria-labelledby="demo-reports">${demo.reports.map((d) => html`<li><code>${d.input}</code> <span class="muted">${d.note}</span></li>`)}</ul>` : null}
${demo.standIns && demo.standIns.length > 0 ? html`<p class="muted" id="demo-stand-ins"><strong>Stand-ins, not checked:</strong> ${demo.standIns.map((name, i) => html`${i > 0 ? ', ' : ''}<code>${name}</code>`)}. These zone files hold only the few records the demo domains point at (an MX host, an SPF include, a DKIM key); they stand in for those providers and are not their DNS, so the demo gives no verdict for them.</p>` : null}
</section>`;
}
