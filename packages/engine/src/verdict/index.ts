/** The verdict: a pure function from analyzer facts to the answer. Nothing here does I/O. */
export { decide, describeTag, effectivePolicyOf, VERDICT_RULES, type VerdictRule } from './rules.js';
export { openSpfFor } from './alignment.js';
export { DEFAULT_GUIDE_BASE_URL, GUIDE_TOPICS, isParked, nextStepFor, rewriteDmarc, type GuideTopic, type NextStep } from './advice.js';
export type { Decision, DkimFacts, DmarcFacts, InboxOutcome, MxFacts, OpenSpf, PolicyName, SharedInfrastructureFacts, SpfFacts, Verdict, VerdictFacts } from './types.js';
