/**
 * The selectors probed when the caller does not know the domain's own, and the CNAME targets that
 * identify a sending service. Every entry names its provider and where the fact comes from
 * (conformance/providers.md §(a) gives the full citations; "DC" is the Domain Connect template
 * repository, Domain-Connect/Templates, named by template file).
 *
 * Guessing is inherently incomplete: Amazon SES, Postmark and HubSpot use per-account selectors, so
 * "no key among these" never means "no DKIM". The reliable source is the `s=` of a real signature.
 */
import { isAtOrBelow } from '../dns/name.js';

/** How far a fact can be trusted: vendor source, consistent third-party sources, or a single list. */
export type SourceConfidence = 'high' | 'medium' | 'low';

/** One well-known selector. A selector used by several providers has one entry per provider. */
export interface KnownSelector {
  selector: string;
  /** The service that publishes keys under this selector; null for generic names any signer may use. */
  provider: string | null;
  source: string;
  confidence: SourceConfidence;
}

/** The built-in selectors, in probe order: the most widely used providers first. */
export const KNOWN_SELECTORS: readonly KnownSelector[] = [
  { selector: 'google', provider: 'Google Workspace', confidence: 'high', source: 'support.google.com/a/answer/11611356 (default selector prefix "google")' },
  { selector: 'selector1', provider: 'Microsoft 365', confidence: 'high', source: 'MicrosoftDocs/defender-docs email-authentication-dkim-configure.md; DC microsoft.com.o365.json' },
  { selector: 'selector2', provider: 'Microsoft 365', confidence: 'high', source: 'MicrosoftDocs/defender-docs email-authentication-dkim-configure.md; DC microsoft.com.o365.json' },
  { selector: 'k1', provider: 'Mailchimp', confidence: 'medium', source: 'netdig.tools mailchimp-dns-records; mailermonk.com DKIM guide (k1 → dkim.mcsv.net)' },
  { selector: 'k1', provider: 'AWeber', confidence: 'high', source: 'DC aweber.com.email-web.json (k1 → k1.optin.com)' },
  { selector: 'k2', provider: 'Mailchimp', confidence: 'medium', source: 'phishfence.io/learn/dmarc-mailchimp (k1, k2); DC mailchimp.com.email-signing.json (account-specific)' },
  { selector: 'k2', provider: 'AWeber', confidence: 'high', source: 'DC aweber.com.email-web.json' },
  { selector: 'k3', provider: 'Mailchimp', confidence: 'medium', source: 'third-party Mailchimp guides (k2/k3 pairs); DC mailchimp.com.email-signing.json' },
  { selector: 'k3', provider: 'AWeber', confidence: 'high', source: 'DC aweber.com.email-web.json' },
  { selector: 's1', provider: 'Twilio SendGrid', confidence: 'high', source: 'twilio.com/docs/sendgrid (domain authentication: s1, s2 CNAMEs); DC sendgrid.com.domain-auth.json' },
  { selector: 's2', provider: 'Twilio SendGrid', confidence: 'high', source: 'twilio.com/docs/sendgrid (domain authentication: s1, s2 CNAMEs); DC sendgrid.com.domain-auth.json' },
  { selector: 'fm1', provider: 'Fastmail', confidence: 'high', source: 'fastmail.help/hc/en-us/articles/360060591153 (selectors fm1, fm2, fm3)' },
  { selector: 'fm2', provider: 'Fastmail', confidence: 'high', source: 'fastmail.help/hc/en-us/articles/360060591153' },
  { selector: 'fm3', provider: 'Fastmail', confidence: 'high', source: 'fastmail.help/hc/en-us/articles/360060591153' },
  { selector: 'protonmail', provider: 'Proton Mail', confidence: 'medium', source: 'proton.me/support/custom-domain; domainsecurityscanner.com Proton guide' },
  { selector: 'protonmail2', provider: 'Proton Mail', confidence: 'medium', source: 'proton.me/support/custom-domain; domainsecurityscanner.com Proton guide' },
  { selector: 'protonmail3', provider: 'Proton Mail', confidence: 'medium', source: 'proton.me/support/custom-domain; domainsecurityscanner.com Proton guide' },
  { selector: 'pdk1', provider: 'Mailgun', confidence: 'high', source: 'documentation.mailgun.com dkim_security; DC zybr.ai.mailgun-autosecurity.json' },
  { selector: 'pdk2', provider: 'Mailgun', confidence: 'high', source: 'documentation.mailgun.com dkim_security; DC zybr.ai.mailgun-autosecurity.json' },
  { selector: 'krs', provider: 'Mailgun', confidence: 'medium', source: 'DC apexsales.ai.mailgun.json (krs._domainkey)' },
  { selector: 'mx', provider: 'Mailgun', confidence: 'medium', source: 'spfwise.com Mailgun guide (mx._domainkey)' },
  { selector: 'smtp', provider: 'Mailgun', confidence: 'medium', source: 'older Mailgun TXT selectors seen in the wild (providers.md §(a))' },
  { selector: 'zmail', provider: 'Zoho Mail', confidence: 'medium', source: 'crmcurator.com Zoho admin guide ("typically zmail._domainkey"); DC zoho.com.zmail_hosting.json' },
  { selector: 'sig1', provider: 'iCloud+ Custom Email Domain', confidence: 'low', source: 'DC icloud.com.custom_email_domain.json (one DKIM CNAME; name from third-party reports)' },
  { selector: 'secureserver1', provider: 'GoDaddy', confidence: 'high', source: 'DC godaddy.com.aab.json' },
  { selector: 'secureserver2', provider: 'GoDaddy', confidence: 'high', source: 'DC godaddy.com.aab.json' },
  { selector: 'mandrill', provider: 'Mandrill (Mailchimp Transactional)', confidence: 'low', source: 'third-party selector lists; not confirmed from a vendor source' },
  { selector: 'mailjet', provider: 'Mailjet', confidence: 'high', source: 'DC mailjet.com.domain-auth.json' },
  { selector: 'resend', provider: 'Resend', confidence: 'high', source: 'DC resend.com.mail.json' },
  { selector: 'mail', provider: 'Brevo (Sendinblue)', confidence: 'medium', source: 'pastebin.com/dc2CxSXa (Sendinblue mail._domainkey TXT)' },
  { selector: 'aweber_key_a', provider: 'AWeber', confidence: 'high', source: 'DC aweber.com.email-web.json' },
  { selector: 'aweber_key_b', provider: 'AWeber', confidence: 'high', source: 'DC aweber.com.email-web.json' },
  { selector: 'aweber_key_c', provider: 'AWeber', confidence: 'high', source: 'DC aweber.com.email-web.json' },
  { selector: 'ctct1', provider: 'Constant Contact', confidence: 'medium', source: 'DC constantcontact.com.email.json (form; names commonly ctct1/ctct2)' },
  { selector: 'ctct2', provider: 'Constant Contact', confidence: 'medium', source: 'DC constantcontact.com.email.json (form; names commonly ctct1/ctct2)' },
  { selector: 'zendesk1', provider: 'Zendesk', confidence: 'low', source: 'third-party selector lists only' },
  { selector: 'zendesk2', provider: 'Zendesk', confidence: 'low', source: 'third-party selector lists only' },
  { selector: 'default', provider: null, confidence: 'low', source: 'generic name used by self-hosted signers (cPanel, OpenDKIM set-ups); third-party selector lists' },
  { selector: 'dkim', provider: null, confidence: 'low', source: 'generic name used by self-hosted signers (rspamd dkim_signing default); third-party selector lists' },
];

/** A CNAME target domain that identifies the service hosting a delegated key. */
export interface DkimCnameProvider {
  /** Matched as a suffix on label boundaries (`x.sendgrid.net` matches `sendgrid.net`; `evilsendgrid.net` does not). */
  suffix: string;
  provider: string;
  source: string;
}

/**
 * CNAME targets of delegated selectors: the strongest provider fingerprint, better than the selector
 * name (providers.md §(a), "Notes for detection"). The longest matching suffix wins.
 */
export const DKIM_CNAME_PROVIDERS: readonly DkimCnameProvider[] = [
  { suffix: 'dkim.amazonses.com', provider: 'Amazon SES', source: 'AWS SES Easy DKIM docs; DC wayfront.com.email-domain.json' },
  { suffix: 'sendgrid.net', provider: 'Twilio SendGrid', source: 'twilio.com/docs/sendgrid domain authentication; public examples' },
  { suffix: 'dkim.fmhosted.com', provider: 'Fastmail', source: 'fastmail.help/hc/en-us/articles/360060591153' },
  { suffix: 'domains.proton.ch', provider: 'Proton Mail', source: 'domainsecurityscanner.com Proton guide' },
  { suffix: 'onmicrosoft.com', provider: 'Microsoft 365', source: 'MicrosoftDocs/defender-docs email-authentication-dkim-configure.md' },
  { suffix: 'dkim.mail.microsoft', provider: 'Microsoft 365', source: 'MicrosoftDocs/defender-docs (domains added from May 2025)' },
  { suffix: 'mcsv.net', provider: 'Mailchimp', source: 'netdig.tools and mailermonk.com Mailchimp guides (k1 → dkim.mcsv.net)' },
  { suffix: 'mailgun.com', provider: 'Mailgun', source: 'documentation.mailgun.com dkim_security (pdk1 → …dkim1.mailgun.com)' },
  { suffix: 'onsecureserver.net', provider: 'GoDaddy', source: 'DC godaddy.com.aab.json' },
  { suffix: 'send.aweber.com', provider: 'AWeber', source: 'DC aweber.com.email-web.json' },
  { suffix: 'optin.com', provider: 'AWeber', source: 'DC aweber.com.email-web.json (k1 → k1.optin.com)' },
];

/** The provider a CNAME target belongs to (longest suffix on label boundaries), or null. */
export function providerForCnameTarget(target: string): string | null {
  let best: DkimCnameProvider | undefined;
  for (const row of DKIM_CNAME_PROVIDERS) {
    if (isAtOrBelow(target, row.suffix) && (!best || row.suffix.length > best.suffix.length)) best = row;
  }
  return best?.provider ?? null;
}

/**
 * The provider(s) a selector name suggests, or null for generic or unknown names. Several providers
 * using one name are joined with " or " ("Mailchimp or AWeber").
 */
export function providerForSelector(selector: string): string | null {
  const providers: string[] = [];
  for (const entry of KNOWN_SELECTORS) {
    if (entry.selector === selector && entry.provider !== null && !providers.includes(entry.provider)) providers.push(entry.provider);
  }
  return providers.length > 0 ? providers.join(' or ') : null;
}

/** The provider of Microsoft's per-domain selectors. */
export const MICROSOFT_DYNAMIC_PROVIDER = 'Microsoft 365';

/**
 * Microsoft's per-domain selector names, `selector1-<domain-with-dashes>` and `selector2-…`. A tenant's
 * own `*.onmicrosoft.com` domain signs with them directly (MicrosoftDocs/defender-docs
 * email-authentication-dkim-configure.md), and some scanners were asked to probe them for custom
 * domains too (globalcyberalliance/domain-security-scanner#35).
 */
export function microsoftDynamicSelectors(domain: string): string[] {
  const dashed = domain.replaceAll('.', '-');
  return [`selector1-${dashed}`, `selector2-${dashed}`];
}
