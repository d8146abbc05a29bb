/**
 * Email alerts through the operator's mail relay, with nodemailer. The relay is configured once
 * for the service: `serve --alert-smtp URL` or SPOOF_CHECKER_ALERT_SMTP (`smtp://` with STARTTLS,
 * RFC 3207, required; `smtps://`, implicit TLS, RFC 8314 §3.3), the user in the URL, the password
 * from SPOOF_CHECKER_ALERT_SMTP_PASSWORD or a file (never from argv: a command line is visible to
 * every user of the machine), `--alert-from ADDRESS` the sender. Extra trusted roots (a test CA)
 * come from the existing `--tls-ca FILE`.
 *
 * The relay's address goes through the address guard as a webhook's does (refused-address unless
 * the operator allows private addresses), and the connection goes to the address that was checked,
 * the certificate still verified against the relay's name. Every failure is a recorded attempt,
 * never an exception; one deadline bounds the whole send.
 */
import { rootCertificates } from 'node:tls';
import { isIP } from 'node:net';
import nodemailer from 'nodemailer';
import { resolveAllowedAddress, type HostLookup } from '@spoof-checker/engine';
import type { DeliveryAttempt, DeliveryAttemptOutcome } from '../../store/monitors.js';
import { WEBHOOK_TIMEOUT_MS } from './webhooks.js';

/** The variable that gives the relay URL (when `--alert-smtp` is not given). */
export const ALERT_SMTP_VARIABLE = 'SPOOF_CHECKER_ALERT_SMTP';
/** The variable that gives the relay password. */
export const ALERT_SMTP_PASSWORD_VARIABLE = 'SPOOF_CHECKER_ALERT_SMTP_PASSWORD';
/** The variable that gives the sender address (when `--alert-from` is not given). */
export const ALERT_FROM_VARIABLE = 'SPOOF_CHECKER_ALERT_FROM';
/** Most recipients of one email channel. */
export const MAX_ALERT_RECIPIENTS = 10;
/** Longest address accepted (RFC 5321 §4.5.3.1.3: a path is at most 256 octets, brackets included). */
export const MAX_ADDRESS_LENGTH = 254;

/** The relay, as the service uses it. */
export interface AlertSmtpConfig {
  /** `smtps` (implicit TLS) or `smtp` (STARTTLS required). */
  scheme: 'smtp' | 'smtps';
  host: string;
  port: number;
  user: string | undefined;
  password: string | undefined;
  /** The sender of every alert. */
  from: string;
  /** Extra trusted roots (PEM), added to Node's defaults. */
  extraCa: string | undefined;
}

/** A mail address as alerts accept it: local@domain, no spaces, no angle brackets, one @. */
export function isMailAddress(text: string): boolean {
  return text.length <= MAX_ADDRESS_LENGTH && /^[^\s@<>"(),;:\\[\]]+@[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+$/i.test(text);
}

/** Why a relay setting is refused (a usage error for `serve`). */
export class AlertSmtpConfigError extends Error {}

/**
 * The relay configuration from the flags and the environment; undefined when no relay is set.
 * `urlFromArgv`: the URL came from `--alert-smtp` (then it may not carry a password).
 */
export function alertSmtpConfig(input: {
  url: string | undefined;
  urlFromArgv: boolean;
  from: string | undefined;
  passwordFromEnv: string | undefined;
  passwordFile: string | undefined;
  readFile: (path: string) => string;
  extraCa: string | undefined;
}): AlertSmtpConfig | undefined {
  if (input.url === undefined || input.url.trim() === '') {
    if (input.from !== undefined) throw new AlertSmtpConfigError('--alert-from needs a relay: give --alert-smtp smtp://relay.example.com:587 (or SPOOF_CHECKER_ALERT_SMTP)');
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(input.url.trim());
  } catch {
    throw new AlertSmtpConfigError('--alert-smtp must be a URL such as smtp://alerts@relay.example.com:587 or smtps://relay.example.com');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw new AlertSmtpConfigError(`--alert-smtp must start with smtp:// (STARTTLS) or smtps:// (TLS), not ${url.protocol}//`);
  if (url.hostname === '') throw new AlertSmtpConfigError('--alert-smtp names no relay host');
  if (url.password !== '' && input.urlFromArgv) {
    throw new AlertSmtpConfigError(`--alert-smtp must not carry a password (a command line is visible to every user of the machine): give it in ${ALERT_SMTP_PASSWORD_VARIABLE} or with --alert-smtp-password-file FILE`);
  }
  const from = input.from?.trim();
  if (from === undefined || from === '') throw new AlertSmtpConfigError('--alert-smtp needs --alert-from ADDRESS (or SPOOF_CHECKER_ALERT_FROM): the sender of the alerts');
  if (!isMailAddress(from)) throw new AlertSmtpConfigError(`--alert-from must be an address such as alerts@example.com, not "${from.slice(0, 100)}"`);
  let password: string | undefined = url.password !== '' ? decodeURIComponent(url.password) : undefined;
  if (input.passwordFile !== undefined) {
    try {
      password = input.readFile(input.passwordFile).replace(/\r?\n$/, '');
    } catch (error) {
      throw new AlertSmtpConfigError(`--alert-smtp-password-file ${input.passwordFile}: cannot read it (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
  } else if (input.passwordFromEnv !== undefined && input.passwordFromEnv !== '') {
    password = input.passwordFromEnv;
  }
  const scheme = url.protocol === 'smtps:' ? 'smtps' : 'smtp';
  const user = url.username !== '' ? decodeURIComponent(url.username) : undefined;
  if (password !== undefined && user === undefined) throw new AlertSmtpConfigError('--alert-smtp has a password but no user: give it as smtp://USER@relay.example.com:587');
  return {
    scheme,
    host: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
    // RFC 6409 §3.1 (submission, 587); RFC 8314 §7.3 (submissions, 465).
    port: url.port !== '' ? Number(url.port) : scheme === 'smtps' ? 465 : 587,
    user,
    password,
    from,
    extraCa: input.extraCa,
  };
}

/** One line describing the relay for the start-up message (never the password). */
export function describeAlertSmtp(config: AlertSmtpConfig): string {
  return `alert mail via ${config.scheme}://${config.user !== undefined ? `${config.user}@` : ''}${config.host}:${config.port} from ${config.from}`;
}

/** Options of one send. */
export interface AlertMailOptions {
  allowPrivateAddresses: boolean;
  lookup?: HostLookup;
  /** The whole send ends within this; default WEBHOOK_TIMEOUT_MS. */
  timeoutMs?: number;
  now?: () => Date;
}

/** The SMTP reply code of a nodemailer error, when the relay answered. */
function replyCode(error: unknown): number | null {
  const code = (error as { responseCode?: unknown } | undefined)?.responseCode;
  return typeof code === 'number' ? code : null;
}

/** Sends one alert mail and says how it went; never throws. */
export async function sendAlertMail(
  config: AlertSmtpConfig,
  mail: { to: string[]; subject: string; text: string; html: string },
  options: AlertMailOptions,
): Promise<DeliveryAttempt> {
  const now = options.now ?? (() => new Date());
  const started = now();
  const done = (outcome: DeliveryAttemptOutcome, statusCode: number | null, detail: string): DeliveryAttempt => ({
    at: started.toISOString(),
    outcome,
    statusCode,
    durationMs: Math.max(0, now().getTime() - started.getTime()),
    detail,
  });
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
  try {
    const checked = await Promise.race([
      resolveAllowedAddress(config.host, options.allowPrivateAddresses, options.lookup).catch((error: unknown) => ({
        ok: false as const,
        kind: 'unresolvable' as const,
        reason: `${config.host} does not resolve (${String((error as NodeJS.ErrnoException)?.code ?? error)})`,
      })),
      expired,
    ]);
    if (checked === 'timeout') return done('timeout', null, `no answer within ${timeoutMs / 1000} s`);
    if (!checked.ok) {
      return checked.kind === 'forbidden'
        ? done('refused-address', null, `refused: the mail relay ${config.host} resolves to ${checked.address}, ${checked.reason}`)
        : done('network-error', null, checked.reason);
    }
    const left = Math.max(1, deadline - Date.now());
    const transport = nodemailer.createTransport({
      // The checked address, so that a DNS answer that changes now cannot reach a private address.
      host: checked.address,
      port: config.port,
      secure: config.scheme === 'smtps',
      // RFC 3207: STARTTLS is required on smtp://, never skipped when the relay does not offer it.
      requireTLS: config.scheme === 'smtp',
      ...(config.user !== undefined ? { auth: { user: config.user, pass: config.password ?? '' } } : {}),
      tls: {
        // The certificate is checked against the relay's name (RFC 6125), not the address.
        ...(isIP(config.host) === 0 ? { servername: config.host } : {}),
        ...(config.extraCa !== undefined ? { ca: [...rootCertificates, config.extraCa] } : {}),
        rejectUnauthorized: true,
      },
      connectionTimeout: left,
      greetingTimeout: left,
      socketTimeout: left,
      disableFileAccess: true,
      disableUrlAccess: true,
    });
    try {
      const sent = await Promise.race([
        transport.sendMail({ from: config.from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html, disableFileAccess: true, disableUrlAccess: true }).then(
          (info) => ({ ok: true as const, response: String(info.response ?? '') }),
          (error: unknown) => ({ ok: false as const, error }),
        ),
        expired,
      ]);
      if (sent === 'timeout') return done('timeout', null, `no answer within ${timeoutMs / 1000} s`);
      if (sent.ok) {
        const code = Number.parseInt(sent.response.slice(0, 3), 10);
        return done('delivered', Number.isFinite(code) ? code : 250, `SMTP ${sent.response.slice(0, 200)}`.trim());
      }
      const code = replyCode(sent.error);
      const failure = sent.error as NodeJS.ErrnoException | undefined;
      const detail = (failure instanceof Error ? failure.message : String(sent.error)).slice(0, 200);
      if (code !== null) return done('smtp-error', code, `SMTP ${detail}`);
      return done('network-error', null, typeof failure?.code === 'string' ? `${failure.code}: ${detail}` : detail);
    } finally {
      transport.close();
    }
  } finally {
    clearTimeout(timer);
  }
}
