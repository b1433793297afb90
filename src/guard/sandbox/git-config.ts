// The repository config the agent's git sees inside the sandbox: a copy of the host
// repository's, reduced to an allow-list of keys that neither hold a credential nor name a
// program to run. A key not listed here is dropped, so a setting git adds tomorrow is out
// until someone decides it is harmless.

/** One `key=value` of `git config --list -z`; value null for a key given without `=`. */
export interface GitConfigEntry {
  /** As git prints it: section and variable lower-cased, the subsection as written. */
  key: string;
  value: string | null;
}

/** Harmless keys of sections without a subsection, by section. */
const PLAIN_KEYS: Record<string, ReadonlySet<string>> = {
  core: new Set([
    'repositoryformatversion',
    'filemode',
    'logallrefupdates',
    'ignorecase',
    'precomposeunicode',
    'symlinks',
    'autocrlf',
    'eol',
    'safecrlf',
    'checkstat',
    'trustctime',
    'quotepath',
    'abbrev',
    'whitespace',
    'compression',
    'loosecompression',
    'bigfilethreshold',
    'commentchar',
    'commentstring',
    'sparsecheckout',
    'sparsecheckoutcone',
    'warnambiguousrefs',
    'protecthfs',
    'protectntfs',
    'preloadindex',
    'splitindex',
    'untrackedcache',
    'checkroundtripencoding',
  ]),
  extensions: new Set(['objectformat', 'compatobjectformat', 'partialclone']),
  user: new Set(['name', 'email', 'useconfigonly']),
  init: new Set(['defaultbranch']),
  merge: new Set(['conflictstyle', 'ff', 'log', 'stat', 'renames', 'renamelimit', 'autostash', 'defaulttoupstream', 'verbosity', 'directoryrenames']),
  diff: new Set([
    'renames',
    'renamelimit',
    'algorithm',
    'mnemonicprefix',
    'noprefix',
    'context',
    'interhunkcontext',
    'indentheuristic',
    'colormoved',
    'colormovedws',
    'relative',
    'ignoresubmodules',
    'submodule',
    'statgraphwidth',
    'suppressblankempty',
    'dirstat',
    'wserrorhighlight',
  ]),
  pull: new Set(['rebase', 'ff']),
  push: new Set(['default', 'autosetupremote', 'followtags']),
  fetch: new Set(['prune', 'prunetags', 'recursesubmodules', 'parallel']),
  rebase: new Set(['autosquash', 'autostash', 'stat', 'missingcommitscheck', 'abbreviatecommands', 'updaterefs']),
  status: new Set(['showuntrackedfiles', 'relativepaths', 'short', 'branch', 'aheadbehind', 'renames', 'renamelimit', 'submodulesummary', 'showstash']),
  log: new Set(['date', 'decorate', 'abbrevcommit', 'follow', 'showroot', 'mailmap']),
  commit: new Set(['verbose', 'status', 'cleanup']),
  index: new Set(['version']),
  feature: new Set(['manyfiles']),
  i18n: new Set(['commitencoding', 'logoutputencoding']),
  rerere: new Set(['enabled', 'autoupdate']),
  checkout: new Set(['defaultremote']),
  color: new Set(['ui']),
};

/** Harmless keys of sections with a subsection (`remote.<name>.url`), by section. */
const SUBSECTION_KEYS: Record<string, ReadonlySet<string>> = {
  remote: new Set(['url', 'pushurl', 'fetch', 'push', 'tagopt', 'prune', 'prunetags', 'mirror', 'skipdefaultupdate', 'skipfetchall', 'promisor', 'partialclonefilter']),
  branch: new Set(['remote', 'merge', 'rebase', 'pushremote', 'description']),
  submodule: new Set(['url', 'branch', 'active', 'fetchrecursesubmodules']),
};

/** Keys whose value is a URL: kept without the user and password part. */
const URL_KEYS = new Set(['remote.url', 'remote.pushurl', 'submodule.url']);

/**
 * Set whatever the host says: git must treat the private gitdir as a worktree's (never
 * bare), and must not repack or run maintenance into it on its own.
 */
const FORCED: GitConfigEntry[] = [
  { key: 'core.bare', value: 'false' },
  { key: 'gc.auto', value: '0' },
  { key: 'maintenance.auto', value: 'false' },
];

/** The entries of a host repository config that the agent's git may see, URLs without credentials. */
export function sanitiseGitConfig(entries: GitConfigEntry[]): GitConfigEntry[] {
  const kept: GitConfigEntry[] = [];
  for (const entry of entries) {
    const parts = splitKey(entry.key);
    if (parts === undefined) continue;
    const { section, subsection, name } = parts;
    if (section === 'alias' && subsection === undefined) {
      // An alias that expands to other git arguments is harmless; one starting with `!` is a shell command.
      if (entry.value !== null && !entry.value.trimStart().startsWith('!')) kept.push(entry);
      continue;
    }
    const allowed = subsection === undefined ? PLAIN_KEYS[section] : SUBSECTION_KEYS[section];
    if (!allowed?.has(name)) continue;
    if (entry.value !== null && URL_KEYS.has(`${section}.${name}`)) {
      kept.push({ key: entry.key, value: withoutUserinfo(entry.value) });
      continue;
    }
    kept.push(entry);
  }
  const forced = new Set(FORCED.map((entry) => entry.key));
  return [...kept.filter((entry) => !forced.has(entry.key)), ...FORCED];
}

/**
 * A URL without the credentials it may carry: `https://user:token@host/x` and
 * `https://token@host/x` become `https://host/x`. A plain user name of an ssh URL
 * (`git@host:x`, `ssh://git@host/x`) is no secret and stays.
 */
export function withoutUserinfo(url: string): string {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url);
  if (scheme) {
    const start = scheme[0].length;
    const end = url.slice(start).search(/[/?#]/);
    const authority = end === -1 ? url.slice(start) : url.slice(start, start + end);
    const at = authority.lastIndexOf('@');
    if (at === -1) return url;
    const userinfo = authority.slice(0, at);
    const sshUser = /^(ssh|git\+ssh|ssh\+git)$/i.test(scheme[1]!) && !userinfo.includes(':');
    return sshUser ? url : url.slice(0, start) + url.slice(start + at + 1);
  }
  // scp-like `user@host:path`: only a password (`user:pw@host:path`) goes.
  const scp = /^([^/@]*)@([^/]*:.*)$/s.exec(url);
  if (scp && scp[1]!.includes(':')) return scp[2]!;
  return url;
}

/** The text of a config file holding `entries`, every value quoted. */
export function formatGitConfig(entries: GitConfigEntry[]): string {
  const sections = new Map<string, string[]>();
  for (const entry of entries) {
    const parts = splitKey(entry.key);
    if (parts === undefined) continue;
    const header = parts.subsection === undefined ? `[${parts.section}]` : `[${parts.section} "${parts.subsection.replace(/[\\"]/g, (c) => `\\${c}`)}"]`;
    const lines = sections.get(header) ?? [];
    lines.push(entry.value === null ? `\t${parts.name}` : `\t${parts.name} = ${quote(entry.value)}`);
    sections.set(header, lines);
  }
  return [...sections].map(([header, lines]) => [header, ...lines].join('\n')).join('\n') + '\n';
}

/** Parses `git config --list -z`: records `key\nvalue` (or a bare `key`), each ended by NUL. */
export function parseGitConfigList(output: string): GitConfigEntry[] {
  return output
    .split('\0')
    .filter((record) => record !== '')
    .map((record) => {
      const newline = record.indexOf('\n');
      return newline === -1 ? { key: record, value: null } : { key: record.slice(0, newline), value: record.slice(newline + 1) };
    });
}

function splitKey(key: string): { section: string; subsection?: string; name: string } | undefined {
  const first = key.indexOf('.');
  const last = key.lastIndexOf('.');
  if (first <= 0 || last === key.length - 1) return undefined;
  const section = key.slice(0, first).toLowerCase();
  const name = key.slice(last + 1).toLowerCase();
  if (!/^[a-z0-9-]+$/.test(section) || !/^[a-z][a-z0-9-]*$/.test(name)) return undefined;
  if (first === last) return { section, name };
  const subsection = key.slice(first + 1, last);
  // A config file cannot hold a newline or NUL in a subsection name.
  if (/[\n\0]/.test(subsection)) return undefined;
  return { section, subsection, name };
}

function quote(value: string): string {
  const escaped = value.replace(/[\\"\n\t\b]/g, (c) => ({ '\\': '\\\\', '"': '\\"', '\n': '\\n', '\t': '\\t', '\b': '\\b' })[c]!);
  return `"${escaped}"`;
}
