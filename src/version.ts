import { createRequire } from 'node:module';

/** This corral's version, from its package.json (dist/ and src/ both sit one level below it). */
export const CORRAL_VERSION = (createRequire(import.meta.url)('../package.json') as { version: string }).version;
