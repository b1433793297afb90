/**
 * Bash brace expansion over an escaped word (a backslash makes the next character
 * literal): `a{b,c}` → `ab ac`, `{1..3}`, `{a..c}`, nested braces. A brace without a
 * top-level comma or a valid range stays literal, as in bash. Stops at `max` results.
 */
export function expandBraces(word: string, max: number): string[] {
  const group = findGroup(word);
  if (group === null) return [word];
  const { open, close, alternatives } = group;
  const prefix = word.slice(0, open);
  const suffix = word.slice(close + 1);
  const results: string[] = [];
  for (const alternative of alternatives) {
    for (const rest of expandBraces(prefix + alternative + suffix, max)) {
      results.push(rest);
      if (results.length >= max) return results;
    }
  }
  return results;
}

interface BraceGroup {
  open: number;
  close: number;
  alternatives: string[];
}

function findGroup(word: string): BraceGroup | null {
  for (let open = 0; open < word.length; open++) {
    if (word[open] === '\\') {
      open += 1;
      continue;
    }
    if (word[open] !== '{' || word[open - 1] === '$') continue;
    const group = readGroup(word, open);
    if (group !== null) return group;
  }
  return null;
}

function readGroup(word: string, open: number): BraceGroup | null {
  let depth = 0;
  const commas: number[] = [];
  for (let i = open; i < word.length; i++) {
    const char = word[i];
    if (char === '\\') {
      i += 1;
      continue;
    }
    if (char === '{') depth += 1;
    else if (char === '}') {
      depth -= 1;
      if (depth === 0) {
        const body = word.slice(open + 1, i);
        if (commas.length > 0) {
          const alternatives: string[] = [];
          let start = open + 1;
          for (const comma of commas) {
            alternatives.push(word.slice(start, comma));
            start = comma + 1;
          }
          alternatives.push(word.slice(start, i));
          return { open, close: i, alternatives };
        }
        const range = expandRange(body);
        return range === null ? null : { open, close: i, alternatives: range };
      }
    } else if (char === ',' && depth === 1) commas.push(i);
  }
  return null;
}

function expandRange(body: string): string[] | null {
  const numeric = /^(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?$/.exec(body);
  if (numeric !== null) {
    const from = Number(numeric[1]);
    const to = Number(numeric[2]);
    const step = Math.abs(Number(numeric[3] ?? 1)) || 1;
    const out: string[] = [];
    for (let n = from; from <= to ? n <= to : n >= to; n += from <= to ? step : -step) {
      out.push(String(n));
      if (out.length > 10_000) break;
    }
    return out;
  }
  const letters = /^([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?\d+))?$/.exec(body);
  if (letters !== null) {
    const from = letters[1]!.charCodeAt(0);
    const to = letters[2]!.charCodeAt(0);
    const step = Math.abs(Number(letters[3] ?? 1)) || 1;
    const out: string[] = [];
    for (let c = from; from <= to ? c <= to : c >= to; c += from <= to ? step : -step) out.push(String.fromCharCode(c));
    return out;
  }
  return null;
}
