import { Chalk, type ChalkInstance } from 'chalk';

/** Colour follows FORCE_COLOR and NO_COLOR, then whether the stream is a terminal. */
export function chooseChalk(env: NodeJS.ProcessEnv, isTTY: boolean | undefined): ChalkInstance {
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '') {
    const level = force === 'false' || force === '0' ? 0 : Math.min(3, Number.parseInt(force, 10) || 1);
    return new Chalk({ level: level as 0 | 1 | 2 | 3 });
  }
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return new Chalk({ level: 0 });
  return new Chalk({ level: isTTY ? 1 : 0 });
}
