import { DatabaseSync } from 'node:sqlite';
import { readdirSync } from 'node:fs';
const dir = process.argv[2]!;
const db = new DatabaseSync(`${dir}/${readdirSync(dir).find((f) => f.endsWith('.db') || f.endsWith('.sqlite'))}`);
for (const q of [
  "select source, sum(messages) m from report_sender_days where organization_id='o' and domain='victim.example' and day between '2026-01-01' and '2026-12-31' and trusted=1 group by source order by m desc limit 1000",
  "select count(distinct source) from report_sender_days where organization_id='o' and domain='victim.example' and day between '2026-01-01' and '2026-12-31' and trusted=1",
  "select count(*) from report_sender_days where organization_id='o' and domain='victim.example' and day between '2026-01-01' and '2026-12-31' and trusted=1",
]) { const t = performance.now(); const r = db.prepare(q).all(); console.log((performance.now() - t).toFixed(0), 'ms', r.length, q.slice(0, 40)); }
