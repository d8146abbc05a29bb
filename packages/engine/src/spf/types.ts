/**
 * SPF (RFC 7208): the record's grammar and the types the parser produces.
 *
 * RFC 7208 §12, Collected ABNF (core rules ALPHA, DIGIT, SP from RFC 5234; strings are
 * case-insensitive, so "V=SPF1", "Include:" and "%{D}" all match):
 *
 *   record           = version terms *SP
 *   version          = "v=spf1"
 *
 *   terms            = *( 1*SP ( directive / modifier ) )
 *   directive        = [ qualifier ] mechanism
 *   qualifier        = "+" / "-" / "?" / "~"
 *   mechanism        = ( all / include / a / mx / ptr / ip4 / ip6 / exists )
 *
 *   all              = "all"
 *   include          = "include"  ":" domain-spec
 *   a                = "a"      [ ":" domain-spec ] [ dual-cidr-length ]
 *   mx               = "mx"     [ ":" domain-spec ] [ dual-cidr-length ]
 *   ptr              = "ptr"    [ ":" domain-spec ]
 *   ip4              = "ip4"      ":" ip4-network   [ ip4-cidr-length ]
 *   ip6              = "ip6"      ":" ip6-network   [ ip6-cidr-length ]
 *   exists           = "exists"   ":" domain-spec
 *
 *   modifier         = redirect / explanation / unknown-modifier
 *   redirect         = "redirect" "=" domain-spec
 *   explanation      = "exp" "=" domain-spec
 *   unknown-modifier = name "=" macro-string
 *                      ; where name is not any known modifier
 *   name             = ALPHA *( ALPHA / DIGIT / "-" / "_" / "." )
 *
 *   ip4-cidr-length  = "/" ("0" / %x31-39 0*1DIGIT) ; value range 0-32
 *   ip6-cidr-length  = "/" ("0" / %x31-39 0*2DIGIT) ; value range 0-128
 *   dual-cidr-length = [ ip4-cidr-length ] [ "/" ip6-cidr-length ]
 *
 *   ip4-network      = qnum "." qnum "." qnum "." qnum
 *   qnum             = DIGIT                 ; 0-9
 *                      / %x31-39 DIGIT       ; 10-99
 *                      / "1" 2DIGIT          ; 100-199
 *                      / "2" %x30-34 DIGIT   ; 200-249
 *                      / "25" %x30-35        ; 250-255
 *   ip6-network      = <as per RFC 4291, Section 2.2>
 *
 *   domain-spec      = macro-string domain-end
 *   domain-end       = ( "." toplabel [ "." ] ) / macro-expand
 *   toplabel         = ( *alphanum ALPHA *alphanum ) /
 *                      ( 1*alphanum "-" *( alphanum / "-" ) alphanum )
 *   alphanum         = ALPHA / DIGIT
 *
 *   explain-string   = *( macro-string / SP )
 *   macro-string     = *( macro-expand / macro-literal )
 *   macro-expand     = ( "%{" macro-letter transformers *delimiter "}" )
 *                      / "%%" / "%_" / "%-"
 *   macro-literal    = %x21-24 / %x26-7E   ; visible characters except "%"
 *   macro-letter     = "s" / "l" / "o" / "d" / "i" / "p" / "h" /
 *                      "c" / "r" / "t" / "v"
 *   transformers     = *DIGIT [ "r" ]
 *   delimiter        = "." / "-" / "+" / "," / "/" / "_" / "="
 */

/** The seven results of check_host() (RFC 7208 §2.6). */
export type SpfResult = 'none' | 'neutral' | 'pass' | 'fail' | 'softfail' | 'temperror' | 'permerror';

/** A directive's qualifier (RFC 7208 §4.6.2); "+" when the record omits it. */
export type Qualifier = '+' | '-' | '~' | '?';

/** RFC 7208 §4.6.2: the result a matching directive gives, by qualifier. */
export const QUALIFIER_RESULT: Readonly<Record<Qualifier, SpfResult>> = {
  '+': 'pass',
  '-': 'fail',
  '~': 'softfail',
  '?': 'neutral',
};

/** The eight mechanisms of RFC 7208 §5. */
export type MechanismName = 'all' | 'include' | 'a' | 'mx' | 'ptr' | 'ip4' | 'ip6' | 'exists';

/** RFC 7208 §7.2 macro letters, lower case (an upper-case letter in a record means "URL-escape the value"). */
export type MacroLetter = 's' | 'l' | 'o' | 'd' | 'i' | 'p' | 'h' | 'c' | 'r' | 't' | 'v';

/** One piece of a parsed macro-string. */
export type MacroToken =
  /** Text copied as is; "%%", "%_" and "%-" are already replaced by "%", " " and "%20". */
  | { kind: 'literal'; text: string }
  | {
      kind: 'macro';
      letter: MacroLetter;
      /** The letter was written in upper case: the expansion is URL-escaped (RFC 7208 §7.3). */
      urlEscape: boolean;
      /** How many right-hand parts to keep; null keeps them all (RFC 7208 §7.3). */
      keep: number | null;
      reverse: boolean;
      /** The delimiter characters to split on; '' means none were written (split on "."). */
      delimiters: string;
    };

/** A parsed macro-string (RFC 7208 §7.1). */
export interface MacroString {
  /** The text as written in the record. */
  text: string;
  tokens: MacroToken[];
  /** True when a `%{…}` expansion is present, so the value depends on the message being checked. */
  dynamic: boolean;
  /** The distinct macro letters used, lower case. */
  letters: MacroLetter[];
}

/** An IP address in the form the matcher compares: a 32-bit number, or four 32-bit words for IPv6. */
export type IpAddress = { version: 4; value: number } | { version: 6; words: readonly [number, number, number, number] };

/** A mechanism with its arguments (RFC 7208 §5). Prefix lengths default to the full address width. */
export type Mechanism =
  | { name: 'all' }
  | { name: 'include'; domainSpec: MacroString }
  | { name: 'a' | 'mx'; domainSpec: MacroString | null; ip4Prefix: number; ip6Prefix: number }
  | { name: 'ptr'; domainSpec: MacroString | null }
  | { name: 'ip4'; network: IpAddress & { version: 4 }; prefix: number }
  | { name: 'ip6'; network: IpAddress & { version: 6 }; prefix: number }
  | { name: 'exists'; domainSpec: MacroString };

/** A qualifier and a mechanism, as written at `position` in the record text. */
export interface Directive {
  type: 'directive';
  qualifier: Qualifier;
  mechanism: Mechanism;
  /** The term as written. */
  text: string;
  /** Offset of the term in the record text. */
  position: number;
}

/** A modifier (RFC 7208 §6): `redirect`, `exp`, or one this version of SPF does not define. */
export type Modifier =
  | { type: 'modifier'; name: 'redirect' | 'exp'; domainSpec: MacroString; text: string; position: number }
  | { type: 'modifier'; name: 'unknown'; key: string; value: MacroString; text: string; position: number };

/** One term of a record. */
export type SpfTerm = Directive | Modifier;

/** A record that parsed without error. */
export interface SpfRecord {
  /** The whole record text. */
  text: string;
  /** Every term, in the order written. */
  terms: SpfTerm[];
  /** The directives, in the order they are evaluated. */
  directives: Directive[];
  redirect: (Modifier & { name: 'redirect' }) | null;
  exp: (Modifier & { name: 'exp' }) | null;
  /** RFC 7208 §6.1: an `all` anywhere in the record makes `redirect` ignored. */
  hasAll: boolean;
}

/** What is wrong with a record: where, which term, and why. */
export interface SpfSyntaxError {
  message: string;
  /** Offset of the offending character in the record text. */
  position: number;
  /** The term that holds it, as written ('' for an error in the version section). */
  term: string;
}

/**
 * The parser's answer. A record with errors still lists the terms that did parse, so the analyzer can
 * describe the rest of it; a receiver returns permerror for it all the same (RFC 7208 §4.6).
 */
export type SpfParseResult =
  | { ok: true; record: SpfRecord }
  | { ok: false; errors: SpfSyntaxError[]; terms: SpfTerm[] };
