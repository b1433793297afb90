// Text from the model or a repository reaches a person's terminal in prompts, progress
// lines and summaries. Shown raw, an escape sequence could recolour, hide or rewrite what
// they read, and a bidi or zero-width character could make one command look like another.

/** How much of one value a prompt shows. */
export const VALUE_LIMIT = 300;

/** At most VALUE_LIMIT characters (code points) of `text`, made visible, saying how many were cut. */
export function cutVisible(text: string, limit = VALUE_LIMIT): string {
  const chars = Array.from(text);
  if (chars.length <= limit) return makeVisible(text);
  return `${makeVisible(chars.slice(0, limit).join(''))}… (+${chars.length - limit} chars)`;
}

// Controls, format characters (zero-width, bidi, soft hyphen, tags), lone surrogates, line and
// paragraph separators, spaces other than U+0020, and fillers and selectors that render as nothing.
const HIDDEN = /[\\\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\uffa0\ufe00-\ufe0f\u{e0100}-\u{e01ef}]/gu;
const NAMED: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\t': '\\t', '\r': '\\r' };

/** Shows what a terminal would hide or act on: `\n`, `\x1b`, `\u{202e}`; a backslash is `\\`, so the display is unambiguous. */
export function makeVisible(text: string): string {
  return text.replace(HIDDEN, (char) => {
    const named = NAMED[char];
    if (named !== undefined) return named;
    const code = char.codePointAt(0)!;
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return `\\x${code.toString(16).padStart(2, '0')}`;
    return `\\u{${code.toString(16)}}`;
  });
}

