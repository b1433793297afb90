import { corralPackage } from './package-root.js';

/** This corral's version, from its package.json. */
export const CORRAL_VERSION = corralPackage().version;
