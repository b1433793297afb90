import type { WordValue } from '../shell/words.js';
import { anyPaths, use, type CommandEffects, type PathUse } from './types.js';
import { hasOption, optionValues, parseArgs } from './options.js';

const READ_ONLY = new Set([
  'status', 'diff', 'log', 'show', 'blame', 'annotate', 'ls-files', 'ls-tree', 'rev-parse', 'grep', 'describe',
  'shortlog', 'cat-file', 'rev-list', 'name-rev', 'merge-base', 'for-each-ref', 'show-ref', 'var', 'version', 'help',
  'count-objects', 'whatchanged', 'check-ignore', 'check-attr', 'diff-tree', 'diff-files', 'diff-index', 'show-branch',
  'cherry', 'range-diff', 'verify-commit', 'verify-tag', 'ls-remote-never',
]);
/** The harness owns these: they move refs the host repository shares, talk to remotes, or throw work away. */
const OWNED = new Set(['push', 'clean', 'switch', 'worktree', 'update-ref', 'symbolic-ref', 'fetch', 'pull', 'gc', 'prune', 'filter-branch', 'filter-repo', 'replace', 'notes', 'reflog-expire', 'remote-set', 'init', 'clone', 'submodule', 'lfs', 'maintenance', 'fsck-objects-never']);
/**
 * Owned commands that change only the worktree's files and the agent's own git directory.
 * Inside bubblewrap that directory is a private copy (the host's `.git` is read-only), so
 * they are left to the fence, which judges the final tree whatever the agent's git did.
 * The rest talk to remotes, make repositories or worktrees, or need the network.
 */
const WORKTREE_ONLY = new Set(['clean', 'switch', 'update-ref', 'symbolic-ref', 'gc', 'prune', 'replace', 'notes', 'reflog-expire', 'maintenance', 'filter-branch', 'filter-repo']);
const GLOBAL_WITH_VALUE = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--exec-path', '--config-env', '--super-prefix']);
const PER_CALL_CONFIG = new Set(['-c', '--config-env', '--exec-path', '--git-dir', '--work-tree', '--namespace', '--super-prefix']);

/** What one `git ...` does, by subcommand, after the global options. */
export function gitEffects(rest: WordValue[], base: CommandEffects): CommandEffects {
  const owned = (reason: string, contained = false): CommandEffects => ({ ...base, known: false, why: reason, hazards: [...base.hazards, { rule: 'baseline.git-owned', reason, ...(contained ? { contained: true as const } : {}) }] });
  // Inside the sandbox the agent's git reads and writes its private, sanitised copy of the config.
  const secrets = (reason: string, contained = false): CommandEffects => ({ ...base, known: false, why: reason, hazards: [...base.hazards, { rule: 'baseline.secrets', reason, ...(contained ? { contained: true as const } : {}) }] });
  const metadata = (reason: string): CommandEffects => ({ ...base, known: false, why: reason, hazards: [...base.hazards, { rule: 'baseline.git-metadata', reason, contained: true }] });
  const known = (paths: PathUse[] = []): CommandEffects => ({ ...base, known: base.why === undefined, paths: [...base.paths, ...paths] });
  const unknown = (why: string, paths: PathUse[] = []): CommandEffects => ({ ...base, known: false, why: base.why ?? why, paths: [...base.paths, ...paths] });

  let i = 0;
  for (; i < rest.length; i++) {
    const text = rest[i]!.text;
    if (!text.startsWith('-')) break;
    const name = text.includes('=') ? text.slice(0, text.indexOf('=')) : text;
    // Inside the sandbox what that code does is confined like any program's, except a
    // repository it points git at: --git-dir and --work-tree stay owned everywhere.
    if (PER_CALL_CONFIG.has(name)) return owned(`\`git ${name}\` changes git's configuration or directories for one call, which can run code`, name === '-c' || name === '--config-env');
    if (GLOBAL_WITH_VALUE.has(text)) i += 1;
  }
  const subcommand = rest[i];
  if (subcommand === undefined) return known();
  if (rest.some((arg) => arg.unknown !== undefined)) return unknown('git gets an argument not known before it runs, which may be an option');
  if (subcommand.unknown !== undefined) return unknown('the git subcommand is not known before it runs');
  const sub = subcommand.text;
  const args = rest.slice(i + 1);
  // Secrets are checked on every argument (`git show HEAD:.env`), as for any command,
  // except for commands that only match names against ignore and attribute rules.
  const secretProbes = sub === 'check-ignore' || sub === 'check-attr' ? [] : anyPaths(args, `git ${sub} argument`);
  const parsed = parseArgs(args, { value: ['-n', '-m', '-C', '-U', '--format', '--pretty', '--author', '--since', '--until', '--grep', '-S', '-G', '-L', '--output', '-o', '--date', '--max-count', '--skip', '--diff-filter', '--abbrev'] });

  switch (sub) {
    case 'config': {
      // Reading: an explicit get or list, or a lone key with no option that writes. Anything else may write.
      const options = parsed.options.map((option) => option.name);
      const readOptions = ['--get', '--get-all', '--get-regexp', '--get-urlmatch', '--get-color', '--get-colorbool', '--list', '-l', '--show-origin', '--show-scope', '--name-only', '--null', '-z', '--includes', '--no-includes', '--type', '--bool', '--int', '--path', '--local', '--worktree', '--all', '--regexp', '--url'];
      const onlyReadOptions = options.every((name) => readOptions.includes(name) || name === '--default');
      const explicitRead = hasOption(parsed, '--get', '--get-all', '--get-regexp', '--get-urlmatch', '--get-color', '--get-colorbool', '--list', '-l') && parsed.operands.length <= 2;
      const verb = parsed.operands[0]?.text;
      const reading = onlyReadOptions && (explicitRead || (verb === 'get' && parsed.operands.length === 2) || (verb === 'list' && parsed.operands.length === 1) || (parsed.operands.length === 1 && !['set', 'unset', 'edit', 'rename-section', 'remove-section'].includes(verb ?? '')));
      if (!reading) return metadata('git config is never changed by the agent');
      const printed = configValuesPrinted(parsed);
      if (printed !== null) return secrets(`\`git config\` prints ${printed}, and config values can hold credentials (an \`http.<url>.extraheader\` token, a password in a remote URL)`, true);
      return known(secretProbes);
    }
    case 'reset':
      if (hasOption(parsed, '--hard', '--keep', '--merge')) return owned('`git reset --hard` throws work away; the harness owns the checkout', true);
      return unknown('`git reset` changes the index', secretProbes);
    case 'checkout': {
      // Only `git checkout [rev] -- paths` restores files; anything else switches what the harness checked out.
      const dashes = args.findIndex((arg) => arg.text === '--');
      if (dashes === -1 || dashes === args.length - 1 || hasOption(parsed, '-b', '-B', '--orphan', '--detach')) return owned('`git checkout` of a branch or commit switches what the harness checked out', true);
      return unknown('`git checkout -- file` rewrites files', secretProbes);
    }
    case 'restore':
      return unknown('`git restore` rewrites files', secretProbes);
    case 'branch': {
      const listing = (parsed.operands.length === 0 || hasOption(parsed, '--list', '-l')) && parsed.options.every((o) => ['-a', '-r', '-v', '--all', '--remotes', '--verbose', '--list', '-l', '--show-current', '--contains', '--merged', '--no-merged', '--sort', '--format', '--color', '--no-color', '--column', '--no-column'].includes(o.name) || o.name === '-vv');
      return listing ? known() : owned('creating, moving or deleting branches changes refs the host repository shares', true);
    }
    case 'tag': {
      const listing = parsed.operands.length === 0 || hasOption(parsed, '-l', '--list');
      return listing && !hasOption(parsed, '-d', '-a', '-s', '-f', '-m') ? known() : owned('tags are refs the host repository shares', true);
    }
    case 'remote': {
      const verb = parsed.operands[0]?.text;
      // Names only; `-v`, `get-url` and `show` print the URLs, which can hold a password or token.
      if (verb === undefined) return parsed.options.length === 0 ? known() : secrets('`git remote -v` prints remote URLs, which can hold a password or token', true);
      if (verb === 'get-url' || verb === 'show') return secrets(`\`git remote ${verb}\` prints remote URLs, which can hold a password or token`, true);
      return owned('remotes belong to the host repository');
    }
    case 'var':
      if (parsed.options.length > 0) return secrets('`git var -l` prints every config value, which can hold credentials', true);
      return known();
    case 'ls-remote':
      return secrets('`git ls-remote` sends the remote\'s credentials over the network and `--get-url` prints them');
    case 'help':
      if (hasOption(parsed, '-w', '--web', '-i', '--info')) return unknown('`git help --web` and `--info` start a browser or info viewer');
      break;
    case 'stash': {
      const verb = parsed.operands[0]?.text;
      if (verb === 'show' && parsed.options.some((option) => /^-[a-zA-Z]*p|^--patch/.test(option.name))) return known([use({ text: '.', glob: null }, 'read', HISTORY_ORIGIN, true)]);
      return verb === 'list' || verb === 'show' ? known() : owned('the stash is a ref the host repository shares', true);
    }
    case 'reflog': {
      const verb = parsed.operands[0]?.text;
      if (verb !== undefined && verb !== 'show') return owned('reflog changes rewrite the host repository', true);
      return known(showsContent('reflog', parsed) ? [use({ text: '.', glob: null }, 'read', HISTORY_ORIGIN, true)] : []);
    }
    case 'worktree':
      if (parsed.operands[0]?.text === 'list' && parsed.operands.length === 1) return known();
      return owned('worktrees belong to the harness');
    default:
      break;
  }
  if (sub === 'credential' || sub.startsWith('credential-')) return secrets(`\`git ${sub}\` prints or stores credentials`);
  if (OWNED.has(sub)) return owned(`\`git ${sub}\` belongs to the harness`, WORKTREE_ONLY.has(sub));
  if (READ_ONLY.has(sub)) {
    // git takes any unambiguous prefix of a long option: `--open` is --open-files-in-pager.
    const risky = parsed.options.map((option) => option.name).find((name) => name.startsWith('--') && name.length > 3 && RISKY_LONG.some((option) => option.startsWith(name)));
    if (risky !== undefined) return unknown(`\`git ${sub} ${risky}\` may run a program or write a file`, secretProbes);
    if (sub === 'grep' && hasOption(parsed, '--no-index', '--untracked')) secretProbes.push(use({ text: '.', glob: null }, 'read', 'git grep of files on disk', true));
    // Content-showing commands can print any tracked file under their pathspecs (all of
    // them without one, or with magic, globs or the root), secrets included.
    if (showsContent(sub, parsed)) for (const scope of historyScopes(args, parsed)) secretProbes.push(use({ text: scope, glob: null }, 'read', HISTORY_ORIGIN, true));
    if (sub === 'diff' && hasOption(parsed, '--no-index')) for (const operand of parsed.operands) secretProbes.push(use(operand, 'read', 'git diff --no-index', true));
    const outputs = optionValues(parsed, '--output', '-o').map((value) => use(value, 'write', `git ${sub} --output`));
    if (sub === 'grep' && hasOption(parsed, '-O', '--open-files-in-pager')) return unknown('`git grep -O` opens a pager');
    if ((sub === 'diff' || sub === 'log' || sub === 'show') && hasOption(parsed, '--ext-diff', '--textconv')) return unknown('external diff drivers run programs');
    return known([...secretProbes, ...outputs]);
  }
  return unknown(`\`git ${sub}\` is not a git command the guard knows to be safe`, secretProbes);
}

/** The origin of a read of every tracked file, judged against the tracked secrets rather than the files on disk. */
export const HISTORY_ORIGIN = 'git history (every tracked file)';

const PATCH_OPTIONS = ['-p', '-u', '--patch', '--full-diff', '--cc', '-c', '--word-diff', '--color-words', '-L'];

function showsContent(sub: string, parsed: ReturnType<typeof parseArgs>): boolean {
  if (sub === 'show' || sub === 'diff' || sub === 'grep' || sub === 'cat-file' || sub === 'range-diff' || sub === 'diff-tree' || sub === 'diff-index' || sub === 'diff-files') {
    return !hasOption(parsed, '--stat', '--name-only', '--name-status', '--shortstat', '--numstat', '--summary', '--quiet', '-s', '--no-patch') || hasOption(parsed, '-p', '--patch');
  }
  if (sub === 'log' || sub === 'whatchanged' || sub === 'reflog') {
    return hasOption(parsed, ...PATCH_OPTIONS) || parsed.options.some((option) => /^-U\d*$|^--unified|^--patch|^--word-diff|^--color-words|^-[a-zA-Z]*p/.test(option.name));
  }
  return false;
}

/**
 * What a content-showing command may print, as paths: each pathspec after `--` (or an
 * operand that names a file), or the whole repository when there is none or one uses
 * pathspec magic (`:/`, `:(top)`, `:!x`), a glob, or names the root.
 */
function historyScopes(args: WordValue[], parsed: ReturnType<typeof parseArgs>): string[] {
  const dashes = args.findIndex((arg) => arg.text === '--');
  const specs = dashes === -1 ? parsed.operands.filter((operand) => /[/.]/.test(operand.text) && !/\.\./.test(operand.text) && !operand.text.includes(':') && !/^(HEAD|@)/.test(operand.text)) : args.slice(dashes + 1);
  if (specs.length === 0) return ['.'];
  if (specs.some((spec) => spec.unknown !== undefined || spec.text.startsWith(':') || /[*?[]/.test(spec.text) || /^(\.\/?|\/|)$/.test(spec.text))) return ['.'];
  return specs.map((spec) => spec.text);
}


/** Long options of read-only git commands that run programs, open pagers or write files. */
const RISKY_LONG = ['--open-files-in-pager', '--ext-diff', '--textconv', '--filters', '--output', '--output-directory', '--exec', '--upload-pack', '--receive-pack', '--config-env', '--run'];

/** Config sections whose values name people, colours and behaviour, never a credential. */
const PLAIN_SECTIONS = new Set([
  'user', 'author', 'committer', 'core', 'color', 'diff', 'merge', 'log', 'init', 'pull', 'push', 'branch', 'status', 'commit',
  'rebase', 'fetch', 'advice', 'grep', 'help', 'i18n', 'blame', 'column', 'tag', 'gc', 'pack', 'safe', 'pager', 'interactive',
  'rerere', 'am', 'apply', 'add', 'clean', 'feature', 'checkout', 'index', 'format', 'alias', 'gpg', 'mergetool', 'difftool', 'stash', 'versionsort',
]);

/**
 * What a config read prints that may be a credential, or null when it prints only names
 * or keys of plain sections: a listing, a regexp or URL match (any key), or a key in a
 * section such as `http`, `remote`, `url`, `credential`, `include`, or whose name says
 * password, token, secret, auth, header or cookie.
 */
function configValuesPrinted(parsed: ReturnType<typeof parseArgs>): string | null {
  const verb = parsed.operands[0]?.text;
  const modern = verb === 'get' || verb === 'list';
  const keys = modern ? parsed.operands.slice(1) : parsed.operands;
  if (hasOption(parsed, '--get-color', '--get-colorbool')) return null;
  const names = hasOption(parsed, '--name-only');
  if (hasOption(parsed, '--list', '-l') || verb === 'list') return names ? null : 'every config value';
  if (hasOption(parsed, '--get-regexp', '--get-urlmatch', '--regexp', '--url')) return names && !hasOption(parsed, '--get-urlmatch', '--url') ? null : 'the values of every key a pattern matches';
  const key = keys[0]?.text;
  if (key === undefined) return 'config values';
  const parts = key.toLowerCase().split('.');
  const section = parts[0]!;
  const variable = parts[parts.length - 1]!;
  if (parts.length < 2 || !PLAIN_SECTIONS.has(section) || /pass|token|secret|auth|header|cookie|cred|url/.test(variable)) return `the value of ${key}`;
  return null;
}
