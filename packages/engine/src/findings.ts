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
