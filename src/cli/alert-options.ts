/**
 * The alert relay's flags, shared by `serve` and `worker` (both run a delivery pump): `--alert-smtp
 * URL` (or SPOOF_CHECKER_ALERT_SMTP), `--alert-from ADDRESS` (or SPOOF_CHECKER_ALERT_FROM),
 * `--alert-smtp-password-file FILE` (or SPOOF_CHECKER_ALERT_SMTP_PASSWORD), and `--tls-ca FILE`
 * for a relay certified by a private CA. A password is never taken from argv.
 */
import { readFileSync } from 'node:fs';
import { ALERT_FROM_VARIABLE, ALERT_SMTP_PASSWORD_VARIABLE, ALERT_SMTP_VARIABLE, AlertSmtpConfigError, alertSmtpConfig, type AlertSmtpConfig } from '../jobs/monitors/alert-email.js';
import { UsageError } from './args.js';

/** The flags (parseArgs form). */
export const ALERT_OPTIONS = {
  'alert-smtp': { type: 'string' },
  'alert-from': { type: 'string' },
  'alert-smtp-password-file': { type: 'string' },
} as const;

/** The help lines. */
export const ALERT_USAGE = `  --alert-smtp URL      send email alerts through this relay: smtp://USER@relay.example.com:587 (STARTTLS required)
                        or smtps://USER@relay.example.com:465 [${ALERT_SMTP_VARIABLE}]; the password only from
                        ${ALERT_SMTP_PASSWORD_VARIABLE} or --alert-smtp-password-file, never in this flag; --tls-ca
                        adds trusted roots; the relay's address is guarded as webhooks' are (--allow-private-addresses)
  --alert-from ADDRESS  the sender of email alerts [${ALERT_FROM_VARIABLE}]
  --alert-smtp-password-file FILE
                        the relay password (the file's first line)`;

/** The relay configuration from the flags and the environment (a bad one is a `UsageError`). */
export function alertSmtpFromFlags(
  values: { 'alert-smtp'?: string | undefined; 'alert-from'?: string | undefined; 'alert-smtp-password-file'?: string | undefined; 'tls-ca'?: string | undefined },
  env: NodeJS.ProcessEnv,
): AlertSmtpConfig | undefined {
  const fromArgv = values['alert-smtp'] !== undefined;
  const url = values['alert-smtp'] ?? (env[ALERT_SMTP_VARIABLE] || undefined);
  let extraCa: string | undefined;
  if (url !== undefined && values['tls-ca'] !== undefined) {
    try {
      extraCa = readFileSync(values['tls-ca'], 'utf8');
    } catch (error) {
      throw new UsageError(`--tls-ca ${values['tls-ca']}: cannot read it (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
  }
  try {
    return alertSmtpConfig({
      url,
      urlFromArgv: fromArgv,
      from: values['alert-from'] ?? (env[ALERT_FROM_VARIABLE] || undefined),
      passwordFromEnv: env[ALERT_SMTP_PASSWORD_VARIABLE],
      passwordFile: values['alert-smtp-password-file'],
      readFile: (path) => readFileSync(path, 'utf8').split('\n')[0] ?? '',
      extraCa,
    });
  } catch (error) {
    if (error instanceof AlertSmtpConfigError) throw new UsageError(error.message);
    throw error;
  }
}
