import path from 'node:path';
import { pathGlob } from '../text/path-glob.js';

/**
 * Files that hold secrets, matched against any path's full text (so `~/.ssh/id_rsa`
 * and `<worktree>/.env` alike). Templates such as `.env.example` are not secrets.
 */
export const SECRET_PATTERNS = [
  '**/.env',
  '**/.env.*',
  '**/*.pem',
  '**/*.key',
  '**/*.p12',
  '**/*.pfx',
  '**/*.jks',
  '**/*.keystore',
  '**/id_rsa*',
  '**/id_dsa*',
  '**/id_ecdsa*',
  '**/id_ed25519*',
  '**/.ssh/**',
  '**/.gnupg/**',
  '**/.aws/**',
  '**/.azure/**',
  '**/.config/gcloud/**',
  '**/.kube/config',
  '**/.docker/config.json',
  '**/.netrc',
  '**/_netrc',
  '**/.pgpass',
  '**/.npmrc',
  '**/.pypirc',
  '**/.git-credentials',
  '**/.htpasswd',
  // A process's environment holds the keys it was started with (corral's own included).
  '/proc/**/environ',
  '/proc/**/mem',
] as const;

const NOT_SECRET = ['**/.env.example', '**/.env.sample', '**/.env.template', '**/.env.dist', '**/.env.defaults', '**/*.pub', '**/.ssh/known_hosts', '**/.ssh/config'];

/**
 * Names a glob is tried against, so a pattern counts as touching a protected path it
 * could match even before that path exists (`cat .en?`, `echo x > .g*\/config`).
 */
export const PROTECTED_PROBES = [
  '.env',
  '.env.local',
  '.env.production',
  '.env.development',
  'id_rsa',
  'id_ed25519',
  '.netrc',
  '.npmrc',
  '.pgpass',
  '.git-credentials',
  'server.pem',
  'server.key',
  '.ssh/id_rsa',
  '.aws/credentials',
  // Secret folders themselves, for a glob that names the folder (`ls ~/.aw*/`).
  '.ssh',
  '.aws',
  '.gnupg',
  '.azure',
  '.git',
  '.git/config',
  '.git/HEAD',
  '.git/index',
  '.git/hooks/pre-commit',
];

// Compiled on first use, not at load: compiling them cost every run a few ms before
// its first model request, and a run only needs them once a tool names a path.
let secretMatchers: { isSecretPath: (file: string) => boolean; isNotSecret: (file: string) => boolean } | undefined;

export function isSecret(absolute: string): boolean {
  secretMatchers ??= { isSecretPath: pathGlob(SECRET_PATTERNS), isNotSecret: pathGlob(NOT_SECRET) };
  return secretMatchers.isSecretPath(absolute) && !secretMatchers.isNotSecret(absolute);
}

/** The git metadata of a worktree: its `.git` entry, the gitdir it points to, and the shared common dir. */
export interface GitMetadata {
  dirs: string[];
}

/** A path inside any `.git` directory, or inside the worktree's own gitdir or common dir. */
export function isGitMetadata(absolute: string, git: GitMetadata): boolean {
  if (absolute.split(path.sep).includes('.git')) return true;
  return git.dirs.some((dir) => absolute === dir || absolute.startsWith(dir + path.sep));
}

const PSEUDO_DEVICES = new Set(['/dev/null', '/dev/stdout', '/dev/stderr', '/dev/stdin', '/dev/tty', '/dev/zero', '/dev/random', '/dev/urandom']);

/** A device or kernel file that is not one of the harmless pseudo-devices. */
export function isDevice(absolute: string): boolean {
  if (PSEUDO_DEVICES.has(absolute) || absolute.startsWith('/dev/fd/') || absolute.startsWith('/proc/self/fd/')) return false;
  return absolute === '/dev' || absolute.startsWith('/dev/') || absolute.startsWith('/sys/') || absolute.startsWith('/proc/sys/');
}

export function isPseudoDevice(absolute: string): boolean {
  return PSEUDO_DEVICES.has(absolute) || absolute.startsWith('/dev/fd/') || absolute.startsWith('/proc/self/fd/');
}
