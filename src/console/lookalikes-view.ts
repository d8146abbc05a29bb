/**
 * `/console/domains/<domain>/lookalikes`: the lookalikes a domain's monitor remembers
 * (src/jobs/monitors/lookalike-memory.ts): first and last seen, the confirmed state, every change of it, and
 * the mark "ours" that keeps a name out of alerts. IDN names are shown in Unicode with their
 * A-label (`xn--`) form beside (RFC 5890 §2.3.2.1), since a lookalike's point is to look the same.
 */
import type { Monitor } from '../store/monitors.js';
import type { RememberedLookalike } from '../store/remembered-lookalikes.js';
import { html, type SafeHtml } from '../web/html.js';
import { FORM_TOKEN_FIELD } from './sessions.js';
import { CONSOLE_PATH } from './accounts.js';
import { consolePage, domainPath, ROLE_CAN, when, type ConsoleViewer, type Notice } from './views.js';

/** Most lookalikes listed on one page. */
export const LOOKALIKES_PER_PAGE = 500;

/** The name as people read it, with its A-label form beside when they differ. */
export function lookalikeName(entry: Pick<RememberedLookalike, 'domain' | 'unicode'>): SafeHtml {
  return entry.unicode !== '' && entry.unicode !== entry.domain ? html`<span lang="und">${entry.unicode}</span> <code class="muted">${entry.domain}</code>` : html`<code>${entry.domain}</code>`;
}

function stateWords(entry: RememberedLookalike): string {
  const s = entry.state;
  if (!s.registered) return 'not registered';
  return ['registered', s.mx ? 'receives mail' : 'no mail', s.spf ? 'SPF published' : 'no SPF', `grade ${s.grade}`].join(', ');
}

/** The lookalikes page of one domain. */
export function lookalikesPage(options: { viewer: ConsoleViewer; monitor: Monitor; entries: RememberedLookalike[] | null; total: number; notice: Notice | null }): SafeHtml {
  const { viewer, monitor, entries } = options;
  const manage = ROLE_CAN.manage(viewer.role);
  const base = `${domainPath(monitor.domain)}/lookalikes`;
  return consolePage({
    title: `Lookalikes of ${monitor.domain}`,
    viewer,
    current: CONSOLE_PATH,
    notice: options.notice,
    body: html`<p><a href="${domainPath(monitor.domain)}">Back to ${monitor.domain}</a></p>
<h1 id="lookalikes-title">Lookalikes of ${monitor.domain}</h1>
${!monitor.checks.includes('lookalikes') ? html`<p class="card" id="lookalikes-off">Lookalike searches are off for this domain: turn on "Lookalike names" in its settings.</p>` : null}
${entries === null || entries.length === 0
  ? html`<p id="no-lookalikes">No lookalike is remembered yet.</p>`
  : html`<p>${options.total.toLocaleString('en-GB')} remembered${options.total > entries.length ? ` (the first ${entries.length.toLocaleString('en-GB')} shown; the API lists them all)` : ''}; registered first, worst grade first. A name marked ours is listed and never alerted.</p>
<div class="table-scroll" tabindex="0" role="region" aria-labelledby="lookalikes-caption"><table id="lookalikes"><caption id="lookalikes-caption">Remembered lookalikes</caption>
<thead><tr><th scope="col">Name</th><th scope="col">State</th><th scope="col">First seen</th><th scope="col">Last seen</th><th scope="col">Changes</th><th scope="col">Ours</th></tr></thead>
<tbody>${entries.map(
      (e) => html`<tr><th scope="row">${lookalikeName(e)}</th><td>${stateWords(e)}${e.pending ? html`<br><span class="muted">unconfirmed change seen ${e.pending.seen}×</span>` : null}</td><td>${when(e.firstSeen)}</td><td>${when(e.lastSeen)}</td>
<td>${e.history.length === 0 ? 'none' : html`<details><summary>${e.history.length} change(s)</summary><ol class="list-plain">${[...e.history].reverse().map((h) => html`<li><time datetime="${h.at}">${when(h.at)}</time>: ${h.change} (${h.before} → ${h.after})</li>`)}</ol></details>`}</td>
<td>${e.ours ? 'Ours' : 'No'}${manage
        ? html`<form method="post" action="${base}/ours" class="inline-action"><input type="hidden" name="${FORM_TOKEN_FIELD}" value="${viewer.token}"><input type="hidden" name="name" value="${e.domain}"><input type="hidden" name="ours" value="${e.ours ? 'no' : 'yes'}"><button type="submit" class="secondary" aria-label="${e.ours ? `Unmark ours: ${e.domain}` : `Mark ours: ${e.domain}`}">${e.ours ? 'Unmark' : 'Mark ours'}</button></form>`
        : null}</td></tr>`,
    )}</tbody></table></div>`}`,
  });
}
