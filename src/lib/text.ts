/** Characters as the API counts them: code points, "é" and "😀" one each (docs/intakes.md, Validation). */
export const characterCount = (text: string) => [...text].length;

/**
 * Characters that change what a reader sees without being seen, refused in every partner text an owner reads: every
 * format (Cf) and control (Cc) character (direction controls, zero-width characters, the soft hyphen, tags), and the
 * letters and marks that print nothing, the variation selectors and the line and paragraph separators. The full list
 * and its reasons: docs/security.md, "Partner text".
 */
const FORMAT_OR_CONTROL = /[\p{Cf}\p{Cc}]/u;
const OTHER_HIDDEN: ReadonlyArray<readonly [number, number]> = [
  [0x034f, 0x034f], // combining grapheme joiner
  [0x115f, 0x1160], // Hangul choseong and jungseong fillers
  [0x17b4, 0x17b5], // Khmer inherent vowels
  [0x180b, 0x180f], // Mongolian free variation selectors (U+180E, a Cf, between them)
  [0x2028, 0x2029], // line and paragraph separators
  [0x3164, 0x3164], // Hangul filler
  [0xfe00, 0xfe0f], // variation selectors 1 to 16
  [0xffa0, 0xffa0], // halfwidth Hangul filler
  [0xe0000, 0xe007f], // tags, the unassigned ones too
  [0xe0100, 0xe01ef], // variation selectors 17 to 256
];
const isHidden = (char: string) => {
  const point = char.codePointAt(0) ?? 0;
  return FORMAT_OR_CONTROL.test(char) || OTHER_HIDDEN.some(([first, last]) => point >= first && point <= last);
};
const EMOJI = /\p{Emoji}/u;
const PICTOGRAPH = /\p{Extended_Pictographic}/u;
/** What may stand between a pictograph and the joiner that follows it: a presentation selector, a skin tone. */
const EMOJI_MODIFIER = /[\uFE0E\uFE0F\u{1F3FB}-\u{1F3FF}]/u;
const LINE_BREAKS = new Set(["\n", "\r", "\u0085", "\u2028", "\u2029"]);

/** `U+202E`, as Unicode names a code point. */
export const codePointName = (char: string) =>
  `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;

/** Whether the hidden character at `index` of `chars` is one the text may keep. */
function allowed(chars: readonly string[], index: number, lines: boolean): boolean {
  const char = chars[index] ?? "";
  const before = chars[index - 1] ?? "";
  // Text of several lines keeps its line breaks and tabs; a carriage return only as half of a CRLF.
  if (lines && (char === "\n" || char === "\t")) return true;
  if (lines && char === "\r") return chars[index + 1] === "\n";
  // The text and emoji presentation selectors, once, right after an emoji ("❤️"); a run of them could carry bits.
  if (char === "\uFE0E" || char === "\uFE0F") return EMOJI.test(before);
  // The zero-width joiner between two pictographs of one emoji ("👩‍💻", "🏳️‍🌈"): it joins pictures, never letters.
  if (char === "\u200D") {
    let back = index - 1;
    while (back > 0 && EMOJI_MODIFIER.test(chars[back] ?? "")) back--;
    return PICTOGRAPH.test(chars[back] ?? "") && PICTOGRAPH.test(chars[index + 1] ?? "");
  }
  return false;
}

/**
 * Why `text` may not be shown as it is, as a predicate of its field ("contains an invisible or direction-changing
 * character (U+202E); remove it"), or undefined. `lines`: the text may have several lines (descriptions, help), so
 * `\n`, `\t` and CRLF are kept; one-line texts (names, titles, labels, choices) refuse every line break.
 */
export function hiddenCharacterProblem(text: string, { lines }: { lines: boolean }): string | undefined {
  const chars = [...text];
  const index = chars.findIndex((char, at) => isHidden(char) && !allowed(chars, at, lines));
  if (index < 0) return undefined;
  const char = chars[index] ?? "";
  const name = codePointName(char);
  if (!lines && LINE_BREAKS.has(char)) return `must be one line: it contains a line break (${name})`;
  if (/\p{Cc}/u.test(char)) return `contains a control character (${name}); remove it`;
  return `contains an invisible or direction-changing character (${name}); remove it`;
}

/**
 * `text` with every character `hiddenCharacterProblem` would refuse in text of several lines written out as its code
 * point between angle brackets (`⟨U+202E⟩`), so that text a receiver or a partner's server returned, which the service
 * cannot refuse, is shown to the owner as it is and cannot reorder or hide what surrounds it (docs/security.md,
 * Partner text). Line breaks and tabs stay.
 */
export function withHiddenShown(text: string): string {
  const chars = [...text];
  return chars
    .map((char, at) => (isHidden(char) && !allowed(chars, at, true) ? `⟨${codePointName(char)}⟩` : char))
    .join("");
}
