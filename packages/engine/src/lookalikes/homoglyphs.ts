/**
 * Which look-alike characters a lookalike may use: ASCII look-alikes (any TLD), and Unicode ones
 * only where the TLD's registry registers them. A registry that registers no IDN (.uk, .nl, .us, …)
 * gets no IDN candidate: such a name cannot exist, and probing it only spends queries.
 */

/** ASCII look-alikes: a character or pair, and what it is mistaken for (rendered in most fonts). */
export const ASCII_GLYPHS: Readonly<Record<string, readonly string[]>> = {
  '0': ['o'],
  '1': ['l', 'i'],
  '3': ['8'],
  '5': ['s'],
  '6': ['b'],
  '8': ['3'],
  b: ['6'],
  c: ['e'],
  cl: ['d'],
  d: ['cl'],
  e: ['c'],
  g: ['q'],
  i: ['1', 'l'],
  l: ['1', 'i'],
  m: ['rn', 'nn'],
  n: ['m', 'r'],
  nn: ['m'],
  o: ['0'],
  q: ['g'],
  rn: ['m'],
  s: ['5'],
  u: ['v'],
  v: ['u'],
  vv: ['w'],
  w: ['vv'],
};

/**
 * Latin letters and the Cyrillic letter each one is mistaken for (Unicode confusables.txt lists
 * each pair as confusable, except м, т and к, which pass for small capitals).
 */
export const LATIN_TO_CYRILLIC: Readonly<Record<string, string>> = {
  a: '\u0430', c: '\u0441', d: '\u0501', e: '\u0435', g: '\u050d', h: '\u04bb', i: '\u0456', j: '\u0458',
  k: '\u043a', l: '\u04cf', m: '\u043c', o: '\u043e', p: '\u0440', q: '\u051b', s: '\u0455', t: '\u0442',
  v: '\u0475', w: '\u051d', x: '\u0445', y: '\u0443',
};

/**
 * Greek letters confusable with a Latin one in lower case (Unicode confusables.txt): tried, like the
 * strict Cyrillic twins, as one letter inside a Latin label where the policy is `mixed`.
 */
export const LATIN_TO_GREEK: Readonly<Record<string, string>> = {
  a: '\u03b1', i: '\u03b9', o: '\u03bf', p: '\u03c1', u: '\u03c5', v: '\u03bd', y: '\u03b3',
};

/** The Cyrillic twins that are confusable in lower case (UTS #39): the only ones a single mixed-script substitution uses. */
const STRICT_CYRILLIC = new Set('acdeghijlopqsvwxy');

/** Latin letters with a stroke or without a dot, which have no decomposition (NFD leaves them whole). */
const STROKE_LETTERS: Readonly<Record<string, string>> = {
  '\u00f8': 'o', '\u0111': 'd', '\u0127': 'h', '\u0131': 'i', '\u0142': 'l', '\u0167': 't', '\u0180': 'b', '\u01b6': 'z',
  '\u00e6': 'ae', '\u0153': 'oe',
};

/** What a TLD's registry registers, for lookalikes of Latin names. */
export interface IdnPolicy {
  /**
   * The non-ASCII Latin letters it registers: `latin` for the whole of Latin-1 Supplement and
   * Latin Extended-A (U+00DF–U+017F), a string of the letters for a narrower table, '' for none.
   */
  latin: 'latin' | string;
  /**
   * Cyrillic: `whole` (all-Cyrillic labels), `mixed` (also one Cyrillic or Greek letter inside a
   * Latin label), or none.
   */
  cyrillic: 'whole' | 'mixed' | null;
}

const NONE: IdnPolicy = { latin: '', cyrillic: null };
/**
 * A TLD this table does not know (the reserved `.example` and `.test` included): the registry's
 * rules are unknown, so every Latin letter and a Cyrillic letter inside a Latin label are tried.
 * More candidates, never a missed one.
 */
export const UNKNOWN_TLD_POLICY: IdnPolicy = { latin: 'latin', cyrillic: 'mixed' };

/**
 * Per-TLD IDN policy. Sources: the registries' IDN tables in the IANA Repository of IDN Practices
 * (https://www.iana.org/domains/idn-tables) and the registries' own pages: Verisign (.com, .net:
 * per-language tables, one script per label), PIR (.org), Afilias/Identity Digital (.info), EURid
 * (.eu: Latin, Greek, Cyrillic), DENIC (.de: 93 Latin letters, https://www.denic.de/en/know-how/idn-domains/),
 * nic.at, SWITCH (.ch/.li), AFNIC (.fr and its overseas TLDs), DNS Belgium (.be), CIRA (.ca: French),
 * DK Hostmaster (.dk: æ ø å ä ö ü é), Norid (.no: Norwegian and Sami), Traficom (.fi), Internetstiftelsen
 * (.se), Registro.br and .pt, Red.es (.es), Registro .it, NASK (.pl), InternetNZ (.nz: Māori macrons);
 * no IDN at Nominet (.uk), SIDN (.nl), .us, .edu, .gov, .mil, .int, CZ.NIC (.cz), SK-NIC (.sk),
 * .ad, auDA (.au), and none in Latin script at .ru, .jp, .cn, .tw, .kr.
 */
export const IDN_POLICY: Readonly<Record<string, IdnPolicy>> = {
  // One script per label today, but .com and .net registered IDNs from 2000, before the IDN
  // guidelines (2003) and the per-language tables: mixed Latin-Cyrillic names registered then still
  // resolve. A single Cyrillic letter is tried (one name per confusable letter: a handful of queries).
  com: { latin: 'latin', cyrillic: 'mixed' },
  net: { latin: 'latin', cyrillic: 'mixed' },
  org: { latin: 'latin', cyrillic: 'whole' },
  info: { latin: 'latin', cyrillic: 'whole' },
  biz: { latin: 'latin', cyrillic: null },
  eu: { latin: 'latin', cyrillic: 'whole' },
  de: { latin: 'latin', cyrillic: null },
  at: { latin: 'àáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿœšž', cyrillic: null },
  pl: { latin: 'latin', cyrillic: 'whole' },
  ch: { latin: 'àáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿœ', cyrillic: null },
  li: { latin: 'àáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿœ', cyrillic: null },
  fr: { latin: 'àáâãäåæçèéêëìíîïñòóôõöùúûüýÿœ', cyrillic: null },
  re: { latin: 'àáâãäåæçèéêëìíîïñòóôõöùúûüýÿœ', cyrillic: null },
  pm: { latin: 'àáâãäåæçèéêëìíîïñòóôõöùúûüýÿœ', cyrillic: null },
  yt: { latin: 'àáâãäåæçèéêëìíîïñòóôõöùúûüýÿœ', cyrillic: null },
  wf: { latin: 'àáâãäåæçèéêëìíîïñòóôõöùúûüýÿœ', cyrillic: null },
  tf: { latin: 'àáâãäåæçèéêëìíîïñòóôõöùúûüýÿœ', cyrillic: null },
  be: { latin: 'àáâãäåæçèéêëìíîïñòóôõöùúûüýÿœ', cyrillic: null },
  ca: { latin: 'àâæçèéêëîïôœùûüÿ', cyrillic: null },
  dk: { latin: 'æøåäöüé', cyrillic: null },
  no: { latin: 'áàäåæčçđéèêŋńñóòôöøšŧüžï', cyrillic: null },
  fi: { latin: 'åäöšžđǥǧǩŋõáâčʒŧ', cyrillic: null },
  se: { latin: 'åäöéü', cyrillic: null },
  es: { latin: 'áàçéèíïñóòúü', cyrillic: null },
  it: { latin: 'àâäèéêëìîïòôöùûüæœçÿß', cyrillic: null },
  br: { latin: 'àáâãçéêíóôõúü', cyrillic: null },
  pt: { latin: 'àáâãçéêíóôõú', cyrillic: null },
  nz: { latin: 'āēīōū', cyrillic: null },
  uk: NONE, nl: NONE, us: NONE, edu: NONE, gov: NONE, mil: NONE, int: NONE, cz: NONE, sk: NONE, ad: NONE,
  au: NONE, ru: NONE, jp: NONE, cn: NONE, tw: NONE, kr: NONE,
};

/** The IDN policy of a public suffix: its own entry, else its TLD's, else `UNKNOWN_TLD_POLICY`. */
export function idnPolicyFor(suffix: string): IdnPolicy {
  const tld = suffix.slice(suffix.lastIndexOf('.') + 1);
  return IDN_POLICY[suffix] ?? IDN_POLICY[tld] ?? UNKNOWN_TLD_POLICY;
}

/** The generic Latin repertoire: the lower-case letters of U+00DF–U+017F that are not ASCII. */
function genericLatin(): string {
  let out = '';
  for (let cp = 0xdf; cp <= 0x17f; cp++) {
    const ch = String.fromCodePoint(cp);
    if (/\p{Ll}/u.test(ch) && ch !== '\u00f7') out += ch;
  }
  return out;
}
const GENERIC_LATIN = genericLatin();

/** The ASCII letter (or pair) a non-ASCII Latin letter is mistaken for: its NFD base, or its stroke-less form. */
function asciiBase(ch: string): string | undefined {
  const stroke = STROKE_LETTERS[ch];
  if (stroke !== undefined) return stroke;
  const base = ch.normalize('NFD').replace(/\p{M}/gu, '');
  return /^[a-z]$/.test(base) ? base : undefined;
}

const tableCache = new Map<string, Map<string, string[]>>();

/**
 * The substitutions the homoglyph fuzzer may make under a public suffix: for each character or
 * pair, what may replace it. ASCII look-alikes always; Unicode ones per `idnPolicyFor`.
 */
export function glyphTable(suffix: string): ReadonlyMap<string, readonly string[]> {
  const policy = idnPolicyFor(suffix);
  const key = `${policy.latin}|${policy.cyrillic ?? ''}`;
  const cached = tableCache.get(key);
  if (cached) return cached;
  const table = new Map<string, string[]>();
  const add = (from: string, to: string): void => {
    const list = table.get(from) ?? [];
    if (!list.includes(to)) list.push(to);
    table.set(from, list);
  };
  for (const [from, tos] of Object.entries(ASCII_GLYPHS)) for (const to of tos) add(from, to);
  const repertoire = policy.latin === 'latin' ? GENERIC_LATIN : policy.latin;
  for (const ch of repertoire) {
    const base = asciiBase(ch);
    if (base !== undefined && base !== ch) add(base, ch);
  }
  if (policy.cyrillic === 'mixed') {
    for (const [latin, cyrillic] of Object.entries(LATIN_TO_CYRILLIC)) if (STRICT_CYRILLIC.has(latin)) add(latin, cyrillic);
    for (const [latin, greek] of Object.entries(LATIN_TO_GREEK)) add(latin, greek);
  }
  tableCache.set(key, table);
  return table;
}

/** Whether the registry of `suffix` registers all-Cyrillic labels (the `cyrillic` fuzzer). */
export function allowsCyrillic(suffix: string): boolean {
  return idnPolicyFor(suffix).cyrillic !== null;
}
