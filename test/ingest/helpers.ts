/**
 * Report messages built for the ingestion tests: multipart with a base64 attachment, a single-part
 * gzip body, a message forwarded inside another, and mbox files of them.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The engine's report fixtures (several reporters, both schemas, zip and gzip, TLS-RPT, hostile files). */
export const REPORTS_DIR = fileURLToPath(new URL('../../fixtures/reports/', import.meta.url));
export const REPORT_SOURCES = `${REPORTS_DIR}src/`;
/** The domain every fixture report is about. */
export const REPORT_DOMAIN = 'spf-cloud-ec2.example';

export const GOOGLE_ZIP = 'google.com!spf-cloud-ec2.example!1795219200!1795305599.zip';
export const YAHOO_GZ = 'yahoo.com!spf-cloud-ec2.example!1795132800!1795219199.xml.gz';
export const OUTLOOK_GZ = 'protection.outlook.com!spf-cloud-ec2.example!1795219200!1795305600.xml.gz';
export const TLS_GZ = 'microsoft.com!spf-cloud-ec2.example!2026-11-21.json.gz';

/** A fixture's bytes. */
export function fixture(name: string): Buffer {
  return readFileSync(`${REPORTS_DIR}${name}`);
}

function base64Lines(bytes: Buffer): string {
  return bytes.toString('base64').replace(/.{1,76}/g, '$&\r\n');
}

/** A multipart/mixed report message: a text part and the attachment, base64. */
export function reportMessage(options: { from?: string; to?: string; subject?: string; attachment: Buffer; fileName: string; contentType: string; messageId?: string }): Buffer {
  const boundary = '=_report_boundary_1';
  return Buffer.from(
    [
      `From: ${options.from ?? 'noreply-dmarc-support@google.com'}`,
      `To: ${options.to ?? 'dmarc@reports.example'}`,
      `Subject: ${options.subject ?? `Report domain: ${REPORT_DOMAIN} Submitter: google.com Report-ID: 1`}`,
      `Message-ID: ${options.messageId ?? '<r1@google.com>'}`,
      'Date: Sat, 21 Nov 2026 08:00:00 +0000',
      'MIME-Version: 1.0',
      `Content-Type: multipart/mixed; boundary="${boundary}"`,
      '',
      `--${boundary}`,
      'Content-Type: text/plain; charset=utf-8',
      '',
      'This is an aggregate report from google.com.',
      '',
      `--${boundary}`,
      `Content-Type: ${options.contentType}; name="${options.fileName}"`,
      `Content-Disposition: attachment; filename="${options.fileName}"`,
      'Content-Transfer-Encoding: base64',
      '',
      base64Lines(options.attachment),
      `--${boundary}--`,
      '',
    ].join('\r\n'),
  );
}

/** A message whose whole single-part body is the gzip report (as Mimecast sends). */
export function singlePartMessage(attachment: Buffer, fileName: string): Buffer {
  return Buffer.from(
    [
      'From: dmarc@mimecast.example',
      'To: dmarc@reports.example',
      `Subject: Report Domain: ${REPORT_DOMAIN} Submitter: mimecast.example`,
      'Message-ID: <single@mimecast.example>',
      'MIME-Version: 1.0',
      `Content-Type: application/gzip; name="${fileName}"`,
      'Content-Transfer-Encoding: base64',
      '',
      base64Lines(attachment),
    ].join('\r\n'),
  );
}

/** `inner` forwarded inside a multipart message (message/rfc822), itself nested in multipart/alternative. */
export function forwardedMessage(inner: Buffer): Buffer {
  return Buffer.from(
    [
      'From: postmaster@relay.example',
      'To: dmarc@reports.example',
      'Subject: Fwd: report',
      'Message-ID: <fwd@relay.example>',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="outer"',
      '',
      '--outer',
      'Content-Type: multipart/alternative; boundary="alt"',
      '',
      '--alt',
      'Content-Type: text/plain',
      '',
      'Forwarded report below.',
      '--alt',
      'Content-Type: text/html',
      '',
      '<p>Forwarded report below.</p>',
      '--alt--',
      '--outer',
      'Content-Type: message/rfc822',
      '',
      inner.toString('latin1'),
      '--outer--',
      '',
    ].join('\r\n'),
    'latin1',
  );
}

/** A message that carries no report (an HTML "[Preview]" notice). */
export function noReportMessage(): Buffer {
  return Buffer.from(
    [
      'From: dmarcreport@microsoft.com',
      'To: dmarc@reports.example',
      'Subject: [Preview] Report Domain: spf-cloud-ec2.example',
      'Message-ID: <preview@microsoft.com>',
      'MIME-Version: 1.0',
      'Content-Type: text/html; charset=utf-8',
      '',
      '<html><body>Your report is being prepared.</body></html>',
      '',
    ].join('\r\n'),
  );
}

/** An mbox of `messages` (RFC 4155: `From ` separators, `>From ` quoting). */
export function mbox(messages: Buffer[]): Buffer {
  return Buffer.concat(
    messages.map((m) =>
      Buffer.concat([Buffer.from('From MAILER-DAEMON Sat Nov 21 08:00:00 2026\n'), Buffer.from(m.toString('latin1').replace(/\r\n/g, '\n').replace(/^From /gm, '>From '), 'latin1'), Buffer.from('\n')]),
    ),
  );
}
