/**
 * The page's only assets: one stylesheet, one small script (copy buttons, a "checking…" state) and
 * an icon, kept as strings so that they ship inside dist/ with the code. Each is served from this
 * host at a path that carries its content hash, so it can be cached for a year and a change is
 * picked up at once. Nothing is loaded from anywhere else (no web fonts, no CDN).
 */
import { createHash } from 'node:crypto';

const STYLESHEET = `
:root {
  color-scheme: light dark;
  --bg: #f6f6f3; --surface: #ffffff; --text: #1b1b1f; --muted: #4d4d57; --border: #d2d2da;
  --accent: #1a4fd0; --accent-text: #ffffff; --focus: #1a4fd0; --code-bg: #f0f0ec;
  --critical: #b42318; --critical-bg: #fdecea; --warning: #8a4600; --warning-bg: #fff3dc;
  --success: #0c6b38; --success-bg: #e5f5eb; --info: #3a4766; --info-bg: #eceff6;
  --mono: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #111215; --surface: #1b1c21; --text: #ececf0; --muted: #b5b5c0; --border: #3b3c46;
    --accent: #8ab4ff; --accent-text: #0b1020; --focus: #8ab4ff; --code-bg: #24252c;
    --critical: #ff9d92; --critical-bg: #3b1512; --warning: #ffc46b; --warning-bg: #352505;
    --success: #7fdca6; --success-bg: #0f2d1c; --info: #b9c6e8; --info-bg: #1f2536;
  }
}
*, *::before, *::after { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--text); font: 1rem/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; overflow-wrap: break-word; }
a { color: var(--accent); text-underline-offset: 0.15em; }
a:hover { text-decoration-thickness: 2px; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; border-radius: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--surface); padding: 0.5rem 1rem; z-index: 1; }
.skip:focus { left: 0.5rem; top: 0.5rem; }
.wrap { max-width: 54rem; margin: 0 auto; padding: 0 1rem; }
header.site { border-bottom: 1px solid var(--border); background: var(--surface); }
header.site .wrap { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: 0.25rem 1rem; padding-top: 0.6rem; padding-bottom: 0.6rem; }
.brand { font-weight: 700; color: var(--text); text-decoration: none; font-size: 1.1rem; display: inline-flex; align-items: center; gap: 0.45rem; }
.brand img { width: 1.4rem; height: 1.4rem; }
header.site nav a { margin-left: 1rem; }
header.site nav a:first-child { margin-left: 0; }
main { padding: 1.5rem 0 3rem; }
h1 { font-size: 1.75rem; line-height: 1.25; margin: 0.2rem 0 0.6rem; }
h2 { font-size: 1.3rem; line-height: 1.3; margin: 2.2rem 0 0.7rem; }
h3 { font-size: 1.05rem; margin: 1.2rem 0 0.35rem; }
p { margin: 0.5rem 0; }
.lead { font-size: 1.1rem; color: var(--muted); }
.muted { color: var(--muted); }
.table-scroll { overflow-x: auto; }
.chart { width: 100%; height: auto; max-width: 45rem; } .chart .pass, .key-pass { fill: var(--success); background: var(--success); } .chart .fail, .key-fail { fill: var(--critical); background: var(--critical); } .chart text { fill: var(--text); font-size: 12px; } .chart line { stroke: var(--muted); } .key { display: inline-block; width: 0.9em; height: 0.9em; vertical-align: -0.1em; } td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; } @media print { .chart .pass, .key-pass { fill: #0c6b38; } .chart .fail, .key-fail { fill: #b42318; } .window-links, #window-form, .csv-link { display: none; } }
table { border-collapse: collapse; width: 100%; margin: 0.6rem 0; font-size: 0.95rem; }
caption { text-align: left; font-weight: 600; padding: 0.2rem 0; }
th, td { text-align: left; vertical-align: top; padding: 0.3rem 0.5rem; border-bottom: 1px solid var(--border); }
.api-operation h3 { margin-top: 0; overflow-wrap: anywhere; }
/* The API reference is the longest page: an operation off screen is laid out and painted once scrolled to. */
.api-operation { content-visibility: auto; contain-intrinsic-size: auto 18rem; }
.method { display: inline-block; min-width: 4.2em; font-size: 0.85em; font-weight: 700; letter-spacing: 0.03em; }
.card { background: var(--surface); border: 1px solid var(--border); border-radius: 10px; padding: 1rem 1.1rem; margin: 1rem 0; }
form.check { margin: 0.75rem 0 0.25rem; }
form.check .row { display: flex; flex-wrap: wrap; gap: 0.5rem; }
form.check .row input { flex: 1 1 14rem; min-width: 0; }
.visually-hidden { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
main:focus { outline: none; }
label { display: block; font-weight: 600; margin-bottom: 0.3rem; }
input[type="text"] { width: 100%; font: inherit; font-size: 1.05rem; padding: 0.6rem 0.7rem; border: 2px solid var(--muted); border-radius: 8px; background: var(--surface); color: var(--text); }
input[type="text"][aria-invalid="true"] { border-color: var(--critical); }
button, .button { font: inherit; font-weight: 600; padding: 0.62rem 1.2rem; border-radius: 8px; border: 2px solid var(--accent); background: var(--accent); color: var(--accent-text); cursor: pointer; }
button[disabled] { opacity: 0.75; cursor: progress; }
.hint { color: var(--muted); font-size: 0.92rem; margin-top: 0.3rem; }
.field-error { color: var(--critical); font-weight: 600; margin: 0.4rem 0 0; }
.checks { display: grid; grid-template-columns: repeat(auto-fit, minmax(12rem, 1fr)); gap: 0.75rem; padding: 0; list-style: none; }
.checks li { background: var(--surface); border: 1px solid var(--border); border-radius: 10px; padding: 0.8rem 0.9rem; }
.checks strong { display: block; }
.verdict { border-left: 6px solid var(--tone); }
.tone-critical { --tone: var(--critical); --tone-bg: var(--critical-bg); }
.tone-warning { --tone: var(--warning); --tone-bg: var(--warning-bg); }
.tone-success { --tone: var(--success); --tone-bg: var(--success-bg); }
.tone-info { --tone: var(--info); --tone-bg: var(--info-bg); }
.badge { display: inline-block; font-weight: 700; font-size: 0.85rem; letter-spacing: 0.02em; text-transform: uppercase; color: var(--tone); background: var(--tone-bg); border: 1px solid var(--tone); border-radius: 999px; padding: 0.1rem 0.65rem; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.35rem 1rem; margin: 0.75rem 0 0; }
.facts dt { font-weight: 600; color: var(--muted); }
.facts dd { margin: 0; min-width: 0; }
@media (max-width: 30rem) { .facts { grid-template-columns: 1fr; gap: 0.1rem; } .facts dd { margin-bottom: 0.45rem; } }
.reasons { list-style: none; padding: 0; margin: 0; }
.reasons li { border: 1px solid var(--border); border-left: 6px solid var(--tone); background: var(--surface); border-radius: 8px; padding: 0.7rem 0.9rem; margin: 0.6rem 0; }
.reasons h3 { margin: 0.35rem 0 0.2rem; font-size: 1.02rem; }
.reasons p { margin: 0; }
.next { border: 2px solid var(--accent); }
.next h2 { margin-top: 0.2rem; }
.record-label { font-weight: 600; margin: 0.8rem 0 0.2rem; }
.record-label.current { color: var(--muted); }
pre { margin: 0.3rem 0 0.6rem; }
pre.record { position: relative; background: var(--code-bg); border: 1px solid var(--border); border-radius: 8px; padding: 0.7rem 0.8rem; white-space: pre; overflow-wrap: normal; word-break: normal; overflow-x: auto; max-width: 100%; font: 0.95rem/1.5 var(--mono); }
pre.record.publish { border: 2px solid var(--success); }
pre.record.current { opacity: 0.85; }
pre.record code { user-select: all; font: inherit; white-space: pre; overflow-wrap: normal; word-break: normal; }
.copy-row { display: flex; justify-content: flex-end; margin-top: -0.3rem; }
.copy { font-size: 0.9rem; padding: 0.3rem 0.8rem; background: var(--surface); color: var(--accent); }
code { font-family: var(--mono); font-size: 0.95em; overflow-wrap: anywhere; }
/* A word with a hyphen (a domain name, a record term): whole while it fits, else broken anywhere, never first at its hyphen (src/web/html.ts keepHyphenatedWhole). */
.nb { display: inline-block; max-width: 100%; word-break: break-all; text-indent: 0; }
.nh { white-space: nowrap; }
.demo-banner { background: var(--warning-bg); border-bottom: 2px solid var(--warning); color: var(--text); }
.demo-banner p { margin: 0; padding: 0.55rem 0; }
.demo-list { padding-left: 1.2rem; }
.demo-list li { margin: 0.3rem 0; }
.demo-domains details { margin-top: 0.6rem; }
.demo-domains summary { cursor: pointer; font-weight: 600; }
section.detail { border-top: 1px solid var(--border); margin-top: 2rem; }
.tree, .tree ul { list-style: none; margin: 0; padding: 0; }
.tree ul { margin-left: 0.6rem; padding-left: 0.9rem; border-left: 2px solid var(--border); }
.tree li { margin: 0.3rem 0; }
.term { font-family: var(--mono); font-weight: 600; overflow-wrap: anywhere; }
.term-meta { color: var(--muted); font-size: 0.9rem; }
.opens { color: var(--critical); font-weight: 700; }
.flag { display: inline-block; font-size: 0.8rem; border: 1px solid var(--border); border-radius: 4px; padding: 0 0.35rem; margin-left: 0.3rem; color: var(--muted); }
.meter { display: block; width: 100%; max-width: 20rem; height: 0.6rem; }
.list-plain { padding-left: 1.2rem; }
.unchecked { border-left: 6px solid var(--warning); }
#transport .reasons li { border-left-color: var(--tone, var(--border)); }
#bimi .bimi-logo { width: 96px; height: 96px; border-radius: 50%; object-fit: contain; background: #fff; border: 1px solid var(--border); }
#transport li.tone-critical, #transport li.tone-warning, #transport li.tone-success, #transport li.tone-info { border-left: 6px solid var(--tone); }
footer.site { border-top: 1px solid var(--border); padding: 1.2rem 0 2rem; color: var(--muted); font-size: 0.92rem; }
.error-page h1 { color: var(--tone); }
.guide h1 { margin-top: 0.5rem; }
@media (max-width: 30rem) { h1 { font-size: 1.45rem; } h2 { font-size: 1.18rem; } .card { padding: 0.85rem 0.8rem; } }
@media (prefers-reduced-motion: no-preference) { html { scroll-behavior: smooth; } }
/* The console (src/console/): forms, the overview table, the timeline. */
.console-form { display: grid; gap: 0.7rem; max-width: 28rem; }
.console-form textarea { width: 100%; font: inherit; padding: 0.5rem 0.6rem; border: 2px solid var(--muted); border-radius: 8px; background: var(--surface); color: var(--text); }
.console-form.inline { display: flex; flex-wrap: wrap; align-items: end; gap: 0.6rem; max-width: none; }
.console-form.inline > div { flex: 1 1 12rem; }
input[type="email"], input[type="password"], input[type="number"], input[type="url"], input[type="search"], .console-form input[type="text"], select { width: 100%; font: inherit; padding: 0.5rem 0.6rem; border: 2px solid var(--muted); border-radius: 8px; background: var(--surface); color: var(--text); }
input[aria-invalid="true"] { border-color: var(--critical); }
fieldset { border: 1px solid var(--border); border-radius: 8px; padding: 0.6rem 0.8rem; margin: 0; }
legend { font-weight: 600; padding: 0 0.3rem; }
fieldset label { display: inline-flex; gap: 0.35rem; align-items: center; font-weight: 400; margin-right: 1rem; }
button.secondary { background: var(--surface); color: var(--accent); }
button.danger { background: var(--surface); color: var(--critical); border-color: var(--critical); }
button.link { background: none; border: none; color: var(--accent); padding: 0; font-weight: 400; text-decoration: underline; }
.wide .wrap { max-width: 80rem; }
.overview td, .overview th { white-space: nowrap; }
.overview th[scope="row"] { white-space: nowrap; }
.overview th a { color: var(--text); }
.notice { border-left: 6px solid var(--tone, var(--info)); }
.timeline { list-style: none; padding: 0; margin: 0; border-left: 3px solid var(--border); }
.timeline li { margin: 0 0 0.9rem 0; padding-left: 0.9rem; }
.timeline time { font-weight: 600; }
.secret { display: block; width: 100%; color: var(--text); resize: vertical; font: 1rem/1.5 var(--mono); background: var(--code-bg); border: 2px solid var(--success); border-radius: 8px; padding: 0.6rem 0.7rem; overflow-wrap: anywhere; user-select: all; }
.member-list { list-style: none; padding: 0; margin: 0; }
.member-list .facts { margin-bottom: 0.6rem; }
.actions { display: flex; flex-wrap: wrap; gap: 0.6rem; align-items: center; }
.window-links [aria-current="page"] { font-weight: 700; color: var(--text); text-decoration: none; border: 2px solid var(--text); border-radius: 6px; padding: 0.1rem 0.5rem; }
`;

const SCRIPT = `
(function () {
  'use strict';
  var live = document.getElementById('copy-status');
  document.querySelectorAll('pre[data-copy]').forEach(function (pre) {
    if (!navigator.clipboard) return;
    var row = document.createElement('div');
    row.className = 'copy-row';
    var button = document.createElement('button');
    button.type = 'button';
    button.className = 'copy';
    button.textContent = 'Copy';
    button.setAttribute('aria-label', 'Copy ' + (pre.getAttribute('data-copy') || 'record'));
    button.addEventListener('click', function () {
      navigator.clipboard.writeText(pre.textContent.trim()).then(function () {
        button.textContent = 'Copied';
        if (live) live.textContent = 'Copied to the clipboard.';
        // The live region is emptied again, so the next copy is announced as new.
        setTimeout(function () { button.textContent = 'Copy'; if (live) live.textContent = ''; }, 2000);
      }, function () {
        if (live) live.textContent = 'Could not copy: select the text and copy it.';
      });
    });
    row.appendChild(button);
    pre.insertAdjacentElement('afterend', row);
  });
  // The sections shown after the verdict ("Mail sent to you", "Names that look like yours", "Your
  // logo in the inbox"), each fetched from this host; the link stays without JavaScript.
  [['transport', 'Checking how mail sent to you travels… (a few seconds)'], ['lookalikes', 'Looking for names that look like yours… (a few seconds)'], ['bimi', 'Checking your BIMI logo… (a few seconds)']].forEach(function (part) {
    document.querySelectorAll('section[data-' + part[0] + '-src]').forEach(function (section) {
      if (!window.fetch) return;
      var note = document.createElement('p');
      note.className = 'muted';
      note.textContent = part[1];
      section.appendChild(note);
      var retryAfter = null;
      fetch(section.getAttribute('data-' + part[0] + '-src'), { headers: { accept: 'text/html' }, credentials: 'same-origin' }).then(function (response) {
        if (response.status === 429) retryAfter = Number(response.headers.get('retry-after')) || 60;
        if (!response.ok) throw new Error(String(response.status));
        return response.text();
      }).then(function (markup) {
        var holder = document.createElement('div');
        holder.innerHTML = markup;
        var fresh = holder.querySelector('section#' + part[0]);
        if (fresh) section.replaceWith(fresh); else throw new Error('no section');
      }).catch(function () {
        // Say why, and leave focus and scroll where the reader is: the verdict above stays in view.
        // The note is the section's last child, so the section's link is above it: named by its words.
        var link = section.querySelector('a[href]');
        var linkWords = link ? 'the link above, \u201c' + link.textContent.trim() + '\u201d,' : 'this part\u2019s own page';
        note.textContent = retryAfter !== null
          ? 'Too many checks from your network just now: try again in ' + retryAfter + ' s (' + linkWords + ' checks it on its own page).'
          : 'This part could not be loaded here; follow ' + (link ? 'the link above, \u201c' + link.textContent.trim() + '\u201d,' : 'this part\u2019s own page') + ' to see it.';
        note.setAttribute('role', 'status');
      });
    });
  });
  document.querySelectorAll('form.check').forEach(function (form) {
    var button = form.querySelector('button[type="submit"]');
    if (!button) return;
    var label = button.textContent;
    form.addEventListener('submit', function () {
      setTimeout(function () { button.disabled = true; button.textContent = 'Checking…'; }, 0);
    });
    // Back restores the page from the back-forward cache as it was left, "Checking…": enable it again.
    window.addEventListener('pageshow', function () { button.disabled = false; button.textContent = label; });
  });
})();
`;

const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><path fill="#1a4fd0" d="M16 2 4 6.5v8.2C4 22.3 9.1 28.4 16 30c6.9-1.6 12-7.7 12-15.3V6.5z"/><path fill="#fff" d="M8 11h16v11H8z"/><path fill="#1a4fd0" d="m8 11 8 6.2 8-6.2v2.3l-8 6.2-8-6.2z"/></svg>`;

/** One asset: where it is served, its type and its bytes. */
export interface Asset {
  path: string;
  contentType: string;
  body: string;
}

function asset(name: string, extension: string, contentType: string, body: string): Asset {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return { path: `/assets/${name}.${hash}.${extension}`, contentType, body };
}

/** The stylesheet, the script and the icon, each at a path that names its content. */
export const ASSETS = Object.freeze({
  stylesheet: asset('site', 'css', 'text/css; charset=utf-8', STYLESHEET.trim() + '\n'),
  script: asset('site', 'js', 'text/javascript; charset=utf-8', SCRIPT.trim() + '\n'),
  icon: asset('icon', 'svg', 'image/svg+xml', ICON),
});

/** Assets are immutable at their hashed path: one year, the longest `max-age` caches honour. */
export const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';
