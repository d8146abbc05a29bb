/**
 * The ports outbound connections use, and the override test labs and relays give: SMTP to MX hosts
 * on 25 (RFC 5321 §2.3.5, §4.5.4), HTTPS on 443.
 */

/** Ports to connect to instead of the standard ones (test labs, relays). */
export interface ConnectPorts {
  /** Default 25, the SMTP port MX delivery uses (RFC 5321 §2.3.5, §4.5.4). */
  smtp?: number | undefined;
  /** Default 443 (the policy host). */
  https?: number | undefined;
}
