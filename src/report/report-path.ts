import path from 'node:path';

/** A file as CI reports name it: relative to `base` (the checkout), with forward slashes. */
export function reportPath(base: string, file: string): string {
  return (path.relative(base, path.resolve(base, file)) || '.').split(path.sep).join('/');
}
