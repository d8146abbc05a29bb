/**
 * A finding: the shape of the spec's `reasons[]`. Analyzers and the verdict both produce them.
 * Ids are an API: once published, an id keeps its meaning.
 */
export type Severity = 'critical' | 'warning' | 'info' | 'success';

export interface Finding {
  id: string;
  severity: Severity;
  title: string;
  detail: string;
}

/** Severity order, most serious first: used to sort reasons for display. */
export const SEVERITY_RANK: Record<Severity, number> = { critical: 0, warning: 1, info: 2, success: 3 };

/**
 * The envelope every optional result section shares (transport, DNSSEC, BIMI and the next ones,
 * listed in `OPTIONAL_SECTIONS`): its own closed status, its findings, and what to do, in order
 * (the first is the one to do now). The section's own fields sit beside these.
 */
export interface SectionEnvelope<Status extends string = string> {
  status: Status;
  findings: Finding[];
  nextSteps: string[];
}

/** The marker of the action a finding's detail ends with ("… Next step: renew the certificate."). */
const NEXT_STEP_MARKER = 'Next step: ';

/**
 * What to do, from findings whose detail names its next step: the most serious first, each
 * step once, in the findings' order within a severity. Findings that name none add nothing.
 */
export function nextStepsOf(findings: readonly Finding[]): string[] {
  const steps: string[] = [];
  const ranked = findings.map((finding, index) => ({ finding, index })).sort((a, b) => SEVERITY_RANK[a.finding.severity] - SEVERITY_RANK[b.finding.severity] || a.index - b.index);
  for (const { finding } of ranked) {
    if (finding.severity === 'success') continue;
    const at = finding.detail.indexOf(NEXT_STEP_MARKER);
    if (at < 0) continue;
    const text = finding.detail.slice(at + NEXT_STEP_MARKER.length).trim();
    const step = text.charAt(0).toUpperCase() + text.slice(1);
    if (step !== '' && !steps.includes(step)) steps.push(step);
  }
  return steps;
}
