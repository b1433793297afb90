import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

/** The first executable file called `name` in a PATH-like list, as an absolute path. */
export function findExecutable(name: string, searchPath: string): string | undefined {
  for (const dir of searchPath.split(path.delimiter)) {
    if (dir === '' || !path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not here; try the next directory.
    }
  }
  return undefined;
}
