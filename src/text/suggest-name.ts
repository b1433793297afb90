import { closest, distance } from 'fastest-levenshtein';

/**
 * The known name `name` was probably meant to be, or undefined when none is close.
 * camelCase and case slips (`checkRounds`, `Allow`) are common enough to catch
 * before measuring edit distance.
 */
export function suggestName(name: string, known: readonly string[]): string | undefined {
  if (known.length === 0) return undefined;
  const snake = name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').replace(/-/g, '_').toLowerCase();
  if (known.includes(snake)) return snake;
  const candidate = closest(snake, [...known]);
  const edits = distance(snake, candidate);
  // At most two edits (a swap of two letters counts two), and at most half the
  // name: `nmae` is a typo of `name`, `ab` is not one of `id`.
  return edits <= 2 && edits <= snake.length / 2 ? candidate : undefined;
}
