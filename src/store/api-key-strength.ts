/**
 * Whether an API key is strong enough to guard an organisation's data: one rule for every way a key
 * comes in (`SPOOF_CHECKER_API_KEYS`, a seed file's `key`, `buildApp`'s `apiKeys`, and the key a
 * request presents). Length alone is not strength: `0123456789abcdef0123456789abcdef` is 32
 * characters of nothing. A key is estimated twice:
 *
 * - as if each character were drawn at random from the alphabet its character classes span
 *   (length × log2 of the alphabet), which must reach `MIN_API_KEY_ENTROPY_BITS`;
 * - the way a guesser would build it: runs (`0123`, `abcd`, `9876`, `aaaa`), pieces that repeat an
 *   earlier piece of the key, years (`2024`) and words from a list (`password`, `welcome`, `qwerty`,
 *   with `P@ssw0rd` spellings) cost only a few bits each, the rest costs its alphabet's bits per
 *   character.
 *
 * That estimate must reach `MIN_API_KEY_PATTERN_BITS`, and the patterns may cover no more than
 * `MAX_API_KEY_PATTERN_SHARE` of the key. A random key passes with room to spare (`openssl rand -hex
 * 32`: 256 bits); the patterns a random key holds by chance (a 3-character run in about one 32-hex-digit
 * key in four) cost it a few bits.
 */

/** Fewest characters a key may have. */
export const MIN_API_KEY_LENGTH = 32;
/** Fewest bits of estimated entropy (length × log2 of the alphabet its character classes span) a key must carry. */
export const MIN_API_KEY_ENTROPY_BITS = 128;
/** Fewest distinct characters a key must use (`aaaa…` is long but guessable). */
export const MIN_API_KEY_DISTINCT_CHARACTERS = 10;
/**
 * Fewest bits a key must carry once its runs, repeats, years and words are counted at what they
 * cost a guesser (`apiKeyPatternBits`). Measured over 100,000 random keys of each form (twice): 32
 * hex digits (128 bits by alphabet) never fell below 98 bits, 32 base64url characters below 162, 64
 * hex digits below 210; `0123456789abcdef0123456789abcdef` is worth 28, `Password123!Password123!Password123!` 44.
 */
export const MIN_API_KEY_PATTERN_BITS = 90;
/**
 * The largest share of a key its patterns may cover: a key mostly made of runs, repeats and words is
 * refused even when a long random-looking prefix lifts its bits (`sk_acceptance_0123456789abcdef…`:
 * 70 %). In the same random keys the patterns covered at most 50 % (32 hex digits; usually under
 * 10 %), 31 % (base64url) and 39 % (64 hex digits).
 */
export const MAX_API_KEY_PATTERN_SHARE = 0.6;
/** Shortest run (`abc`, `321`, `zzz`) or repeated piece counted as a pattern. */
export const MIN_PATTERN_LENGTH = 3;
/** Shortest word looked up in `COMMON_WORDS`. */
export const MIN_WORD_LENGTH = 4;

/**
 * Words guessers try first: the most common password bases (the top of the published password
 * leak lists), keyboard walks, and the words people put in keys (`secret`, `token`, `admin`…). A
 * key may contain one among random characters; made of them, it is refused.
 */
const COMMON_WORDS: readonly string[] = [
  'password', 'passwd', 'pass', 'passphrase', 'secret', 'secrets', 'token', 'apikey', 'admin', 'administrator', 'root', 'user', 'guest',
  'login', 'letmein', 'welcome', 'hello', 'test', 'testing', 'demo', 'example', 'sample', 'default', 'changeme', 'change', 'temp', 'temporary',
  'master', 'access', 'private', 'public', 'secure', 'security', 'shadow', 'super', 'superman', 'batman', 'trustno', 'iloveyou', 'love',
  'monkey', 'dragon', 'princess', 'sunshine', 'shadow', 'football', 'baseball', 'soccer', 'hockey', 'basketball', 'master', 'michael',
  'jordan', 'charlie', 'thomas', 'jessica', 'ashley', 'daniel', 'andrew', 'joshua', 'matthew', 'jennifer', 'hunter', 'ranger', 'buster',
  'tigger', 'summer', 'winter', 'spring', 'autumn', 'january', 'february', 'march', 'april', 'june', 'july', 'august', 'september',
  'october', 'november', 'december', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday', 'freedom', 'whatever',
  'computer', 'internet', 'service', 'server', 'database', 'system', 'company', 'business', 'office', 'account', 'email', 'mail', 'spoof',
  'checker', 'spoofchecker', 'production', 'prod', 'staging', 'development', 'live', 'local', 'localhost', 'qwerty', 'qwertz', 'azerty',
  'asdf', 'asdfgh', 'asdfghjkl', 'zxcv', 'zxcvbn', 'zxcvbnm', 'qazwsx', 'wsxedc', 'poiuy', 'lkjhg', 'mnbvc', 'abcd', 'abcdef', 'alpha',
  'beta', 'gamma', 'delta', 'omega', 'bravo', 'golf', 'hotel', 'india', 'kilo', 'lima', 'mike', 'oscar', 'papa', 'romeo', 'sierra',
  'tango', 'victor', 'whiskey', 'xray', 'yankee', 'zulu', 'orange', 'apple', 'banana', 'cherry', 'lemon', 'coffee', 'cookie', 'chocolate',
  'pepper', 'ginger', 'purple', 'yellow', 'green', 'black', 'white', 'silver', 'golden', 'diamond', 'star', 'stars', 'starwars', 'matrix',
  'killer', 'angel', 'heaven', 'money', 'dollar', 'family', 'friend', 'friends', 'forever', 'happy', 'lucky', 'magic', 'music', 'power',
  'rock', 'rocket', 'fish', 'bird', 'horse', 'tiger', 'lion', 'bear', 'eagle', 'falcon', 'phoenix', 'wolf', 'snake', 'cat', 'dog',
  'puppy', 'kitten', 'pokemon', 'minecraft', 'google', 'facebook', 'twitter', 'github', 'amazon', 'microsoft', 'windows', 'linux', 'apple',
  'london', 'paris', 'berlin', 'boston', 'chicago', 'dallas', 'austin', 'texas', 'canada', 'america', 'england', 'france', 'germany',
  'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'zero', 'first', 'second', 'third', 'number', 'key', 'keys',
  'open', 'sesame', 'opensesame', 'abc', 'xyz', 'this', 'that', 'with', 'from', 'your', 'have', 'more', 'will', 'home', 'about', 'page',
  'search', 'free', 'other', 'information', 'time', 'site', 'what', 'which', 'their', 'news', 'only', 'when', 'here', 'also', 'help',
  'view', 'online', 'first', 'been', 'would', 'were', 'some', 'these', 'click', 'like', 'service', 'than', 'find', 'price', 'date',
  'back', 'people', 'list', 'name', 'just', 'over', 'state', 'year', 'into', 'contact', 'next', 'used', 'work', 'last', 'most', 'data',
  'make', 'them', 'should', 'product', 'post', 'city', 'policy', 'number', 'such', 'please', 'available', 'copyright', 'support',
  'message', 'after', 'best', 'software', 'then', 'good', 'video', 'well', 'where', 'info', 'rights', 'high', 'right', 'school', 'through',
  'each', 'links', 'review', 'years', 'order', 'very', 'privacy', 'book', 'items', 'group', 'need', 'many', 'user', 'said', 'does', 'under',
  'general', 'research', 'university', 'mail', 'full', 'correct', 'horse', 'battery', 'staple', 'dream', 'house', 'world', 'water',
  'fire', 'earth', 'light', 'night', 'dark', 'blue', 'red', 'sun', 'moon', 'sky', 'ocean', 'river', 'mountain', 'forest', 'flower',
  'garden', 'king', 'queen', 'prince', 'knight', 'ninja', 'pirate', 'soldier', 'warrior', 'wizard', 'hacker', 'cyber', 'crypto',
  'bitcoin', 'cloud', 'network', 'router', 'wireless', 'wifi', 'mobile', 'phone', 'iphone', 'samsung', 'nokia', 'mustang', 'ferrari',
  'porsche', 'harley', 'yamaha', 'jaguar', 'corvette', 'camaro', 'chevy', 'toyota', 'honda', 'nissan', 'bmw', 'mercedes',
].filter((word) => word.length >= MIN_WORD_LENGTH);

/** The `P@ssw0rd` spellings read back as letters. */
const LEET: Readonly<Record<string, string>> = { '0': 'o', '1': 'l', '3': 'e', '4': 'a', '5': 's', '7': 't', '@': 'a', $: 's', '!': 'i', '|': 'l', '+': 't' };

/** Keyboard walks with digits, which the spellings below would otherwise hide. */
const DIGIT_WALKS: readonly string[] = ['1q2w3e4r5t6y7u8i9o0p', 'q1w2e3r4t5y6u7i8o9p0', '1qaz2wsx3edc4rfv5tgb6yhn7ujm8ik9ol0p', 'zaq12wsx', 'qazwsxedc', '!qaz@wsx', '1q2w3e', 'q1w2e3'];

/** Keyboard rows and walks: any stretch of six or more of them, from their start, counts as a word. */
const KEYBOARD_WALKS: readonly string[] = [...DIGIT_WALKS, 'qwertyuiop', 'asdfghjkl', 'zxcvbnm', 'azertyuiop', 'qwertzuiop', 'poiuytrewq', 'lkjhgfdsa', 'mnbvcxz'];
/** Shortest prefix of a keyboard walk counted as a word. */
const MIN_WALK_LENGTH = 6;

const WORDS: ReadonlySet<string> = new Set(
  [...COMMON_WORDS, ...KEYBOARD_WALKS.flatMap((walk) => Array.from({ length: walk.length - MIN_WALK_LENGTH + 1 }, (_, k) => walk.slice(0, MIN_WALK_LENGTH + k)))].map(normaliseWord),
);
/** Every prefix of every word, so that a lookup stops as soon as no word can match. */
const WORD_PREFIXES: ReadonlySet<string> = new Set([...WORDS].flatMap((word) => Array.from({ length: word.length }, (_, k) => word.slice(0, k + 1))));
/** The bits a word of the list costs a guesser: which word, and whether it was capitalised or spelt with digits. */
const WORD_BITS = Math.log2(WORDS.size) + 2;

/** The bits a year (1900 to 2099) costs a guesser. */
const YEAR_BITS = Math.log2(200);

/** A word as it is looked up: lower case, `P@ssw0rd` spellings read as letters. */
function normaliseWord(word: string): string {
  let out = '';
  for (const char of word.toLowerCase()) out += LEET[char] ?? char;
  return out;
}

/** The alphabet the key's character classes span: 26 a class of letters, 10 digits, 32 symbols; 16 for hex. */
function alphabetSize(key: string): number {
  let alphabet = 0;
  if (/[a-z]/.test(key)) alphabet += 26;
  if (/[A-Z]/.test(key)) alphabet += 26;
  if (/[0-9]/.test(key)) alphabet += 10;
  if (/[^A-Za-z0-9]/.test(key)) alphabet += 32;
  // Hex is the usual form of a random key: its letters span 6, not 26.
  if (/^[0-9a-f]+$/i.test(key) && /[a-f]/i.test(key) && !(/[a-f]/.test(key) && /[A-F]/.test(key))) alphabet = 16;
  return Math.max(2, alphabet);
}

/** The class a character's runs stay in: digits, lower-case or upper-case letters (other characters make no runs). */
function runClass(code: number): number {
  if (code >= 48 && code <= 57) return 1;
  if (code >= 97 && code <= 122) return 2;
  if (code >= 65 && code <= 90) return 3;
  return 0;
}

/** Length of the run starting at `i`: each character the previous plus a fixed step of -1, 0 or +1, in one class. */
function runLength(key: string, i: number): number {
  if (i + 1 >= key.length) return 1;
  const first = key.charCodeAt(i);
  const cls = runClass(first);
  const step = key.charCodeAt(i + 1) - first;
  if (Math.abs(step) > 1) return 1;
  let length = 1;
  while (i + length < key.length) {
    const code = key.charCodeAt(i + length);
    const previous = key.charCodeAt(i + length - 1);
    // Repeats of any character count (`!!!!`); ascending and descending runs only within a class.
    if (code - previous !== step || (step !== 0 && (cls === 0 || runClass(code) !== cls))) break;
    length++;
  }
  return length;
}

/**
 * Length of a run of repeated characters starting at `i` (`00112233`, `aaabbbccc`): each character
 * `times` times over (2 to 4), the characters one step apart in one class. At least three steps, so
 * chance (two pairs) never counts.
 */
function stutterRunLength(key: string, i: number): number {
  let best = 0;
  for (let times = 2; times <= 4; times++) {
    const cls = runClass(key.charCodeAt(i));
    if (cls === 0) return 0;
    let step = 0;
    let groups = 0;
    for (let at = i; at + times <= key.length; at += times) {
      const code = key.charCodeAt(at);
      let same = true;
      for (let k = 1; k < times; k++) if (key.charCodeAt(at + k) !== code) same = false;
      if (!same || runClass(code) !== cls) break;
      if (groups > 0) {
        const delta = code - key.charCodeAt(at - times);
        if (groups === 1) step = delta;
        if (Math.abs(delta) !== 1 || delta !== step) break;
      }
      groups++;
    }
    if (groups >= 4) best = Math.max(best, groups * times);
  }
  return best;
}

/** Length of the longest piece starting at `i` that already occurs, whole, earlier in the key. */
function repeatLength(key: string, i: number): number {
  let best = 0;
  for (let length = MIN_PATTERN_LENGTH; i + length <= key.length; length++) {
    if (!key.slice(0, i + length - 1).includes(key.slice(i, i + length))) break;
    // The earlier copy must end before this one starts (`abab` repeats `ab`, `aaa` is a run).
    if (key.slice(0, i).includes(key.slice(i, i + length))) best = length;
    else break;
  }
  return best;
}

/** 4 when a year from 1900 to 2099 starts at `i` (`2024`: people date their keys), else 0. */
function yearLength(key: string, i: number): number {
  return /^(?:19|20)\d\d/.test(key.slice(i, i + 4)) ? 4 : 0;
}

/** Length of the longest listed word starting at `i` (case and `P@ssw0rd` spellings ignored), 0 for none. */
function wordLength(key: string, i: number): number {
  let normalised = '';
  let best = 0;
  for (let j = i; j < key.length; j++) {
    const char = key[j]!.toLowerCase();
    normalised += LEET[char] ?? char;
    if (!WORD_PREFIXES.has(normalised)) break;
    if (normalised.length >= MIN_WORD_LENGTH && WORDS.has(normalised)) best = normalised.length;
  }
  return best;
}

/**
 * The key's bits as a guesser builds it: left to right, the longest pattern that starts at each
 * place (a run, a repeat of an earlier piece, a listed word) at its cost, any other character at
 * log2 of the alphabet. Every pattern also names where it is (`log2` of the key's length).
 */
export function apiKeyPatternBits(key: string): number {
  return measurePatterns(key).bits;
}

/** Characters of the key inside a run, a repeat, a year or a listed word. */
export function apiKeyPatternCharacters(key: string): number {
  return measurePatterns(key).covered;
}

function measurePatterns(key: string): { bits: number; covered: number } {
  const perCharacter = Math.log2(alphabetSize(key));
  const where = Math.log2(Math.max(2, key.length));
  let bits = 0;
  let covered = 0;
  let i = 0;
  while (i < key.length) {
    const run = Math.max(runLength(key, i), stutterRunLength(key, i));
    const repeat = repeatLength(key, i);
    const word = wordLength(key, i);
    const year = yearLength(key, i);
    const longest = Math.max(run >= MIN_PATTERN_LENGTH ? run : 0, repeat, word, year);
    if (longest === 0) {
      bits += perCharacter;
      i++;
      continue;
    }
    // A run: its first character, its step (3) and its length; a repeat: where the earlier copy is and its length; a word: which; a year: which of 200.
    if (longest === word) bits += WORD_BITS;
    else if (longest === year) bits += YEAR_BITS;
    else if (longest === repeat) bits += where + Math.log2(longest);
    else bits += perCharacter + Math.log2(3) + Math.log2(longest);
    i += longest;
    covered += longest;
  }
  return { bits, covered };
}

/**
 * Why `key` is too easy to guess, or null when it is strong: shorter than `MIN_API_KEY_LENGTH`,
 * fewer than `MIN_API_KEY_DISTINCT_CHARACTERS` distinct characters, under `MIN_API_KEY_ENTROPY_BITS`
 * counted by alphabet, or under `MIN_API_KEY_PATTERN_BITS` once its runs, repeats and words are
 * counted (`apiKeyPatternBits`), or more than `MAX_API_KEY_PATTERN_SHARE` made of them. The reason
 * never quotes the key.
 */
export function apiKeyWeakness(key: string): string | null {
  if (key.length < MIN_API_KEY_LENGTH) return `it has ${key.length} character(s), fewer than ${MIN_API_KEY_LENGTH}`;
  const distinct = new Set(key).size;
  if (distinct < MIN_API_KEY_DISTINCT_CHARACTERS) return `it uses only ${distinct} distinct character(s)`;
  const bits = Math.floor(key.length * Math.log2(alphabetSize(key)));
  if (bits < MIN_API_KEY_ENTROPY_BITS) return `it carries about ${bits} bits of entropy, fewer than ${MIN_API_KEY_ENTROPY_BITS}`;
  const patterns = measurePatterns(key);
  const patternBits = Math.floor(patterns.bits);
  const share = patterns.covered / key.length;
  if (patternBits < MIN_API_KEY_PATTERN_BITS || share > MAX_API_KEY_PATTERN_SHARE) {
    return (
      `it is built from sequential runs, repeats or common words (such as 0123, abcd, a piece repeated, a year, 'password'): ` +
      `they make up ${Math.round(share * 100)} % of it, and it is worth about ${patternBits} bits to a guesser (a key needs ${MIN_API_KEY_PATTERN_BITS}, ` +
      `with patterns under ${Math.round(MAX_API_KEY_PATTERN_SHARE * 100)} % of it)`
    );
  }
  return null;
}

/** How to make a strong key, for the messages that refuse one. */
export const STRONG_KEY_ADVICE = `Use at least ${MIN_API_KEY_LENGTH} random characters, e.g. the output of 'openssl rand -hex 32'`;
