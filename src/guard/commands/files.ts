import type { WordValue } from '../shell/words.js';
import { hasOption, optionValues, parseArgs, UNKNOWN_ARGUMENT } from './options.js';
import { unknownOption, use, type CommandEffects, type Hazard, type Known, type PathUse, type Unknown } from './types.js';

const WRITERS: Record<string, { value: string[]; long: string[]; optional?: string[] }> = {
  tee: { value: [], optional: ['--output-error'], long: ['--append', '--ignore-interrupts'] },
  touch: { value: ['-d', '-r', '-t', '--date', '--reference', '--time'], long: ['--no-create', '--no-dereference'] },
  mkdir: { value: ['-m', '--mode'], optional: ['--context'], long: ['--parents', '--verbose'] },
  rmdir: { value: [], long: ['--ignore-fail-on-non-empty', '--parents', '--verbose'] },
  truncate: { value: ['-s', '-r', '--size', '--reference'], long: ['--no-create', '--io-blocks'] },
  shred: { value: ['-n', '-s', '--iterations', '--size', '--random-source'], optional: ['--remove'], long: ['--force', '--exact', '--verbose', '--zero'] },
  rm: { value: [], optional: ['--interactive'], long: ['--force', '--one-file-system', '--no-preserve-root', '--preserve-root', '--recursive', '--dir', '--verbose'] },
  unlink: { value: [], long: [] },
};

/** tee, touch, mkdir, rmdir, truncate, shred, rm, unlink: every operand is written (rm and unlink act on a link itself). */
export function writerEffects(name: string, rest: WordValue[], known: Known, unknown: Unknown): CommandEffects {
  const spec = WRITERS[name]!;
  const parsed = parseArgs(rest, spec);
  if (parsed.unknown.length > 0) return unknown(unknownOption(name, parsed.unknown[0]!));
  const recursive = (name === 'rm' && hasOption(parsed, '-r', '-R', '--recursive')) || (name === 'rmdir' && hasOption(parsed, '-p', '--parents'));
  const noFollow = name === 'rm' || name === 'unlink' || name === 'rmdir';
  const paths = parsed.operands.map((v) => use(v, 'write', `${name} argument`, recursive, noFollow ? { noFollow: true } : {}));
  paths.push(...optionValues(parsed, '-r', '--reference', '--random-source').map((v) => use(v, 'read', `${name} --reference`)));
  return known(paths);
}

const COPY_VALUE = ['-t', '-S', '--target-directory', '--suffix', '--no-preserve', '--sparse'];
const COPY_OPTIONAL = ['--backup', '--preserve', '--reflink', '--context'];
const COPY_LONG = ['--archive', '--attributes-only', '--copy-contents', '--dereference', '--force', '--interactive', '--no-dereference', '--no-clobber', '--parents', '--recursive', '--remove-destination', '--strip-trailing-slashes', '--no-target-directory', '--update', '--verbose', '--one-file-system', '--debug', '--exchange', '--no-copy', '--link', '--symbolic-link'];

/** cp and mv: sources read (mv also removes them), the destination written. */
export function copyEffects(name: 'cp' | 'mv', rest: WordValue[], known: Known, unknown: Unknown): CommandEffects {
  const parsed = parseArgs(rest, { value: COPY_VALUE, optional: COPY_OPTIONAL, long: COPY_LONG });
  if (parsed.unknown.length > 0) return unknown(unknownOption(name, parsed.unknown[0]!));
  // A link shares its target: a later write through it lands where the guard did not look.
  if (hasOption(parsed, '-l', '-s', '--link', '--symbolic-link')) return unknown(`\`${name}\` making links lets later writes land elsewhere`);
  const recursive = name === 'mv' || hasOption(parsed, '-r', '-R', '-a', '--recursive', '--archive');
  const target = optionValues(parsed, '-t', '--target-directory')[0];
  const sources = target ? parsed.operands : parsed.operands.slice(0, -1);
  const destination = target ?? parsed.operands[parsed.operands.length - 1];
  const paths: PathUse[] = [];
  for (const source of sources) {
    paths.push(use(source, 'read', `${name} source`, recursive, name === 'mv' ? { noFollow: true } : {}));
    if (name === 'mv') paths.push(use(source, 'write', 'mv source', false, { noFollow: true, keepsLink: true }));
  }
  if (destination) paths.push(use(destination, 'write', `${name} destination`, recursive));
  return known(paths);
}

export function ddEffects(rest: WordValue[], known: Known, unknown: Unknown): CommandEffects {
  const paths: PathUse[] = [];
  for (const arg of rest) {
    if (arg.unknown !== undefined) return unknown(unknownOption('dd', UNKNOWN_ARGUMENT));
    if (arg.text.startsWith('if=')) paths.push(use({ ...arg, text: arg.text.slice(3) }, 'read', 'dd if='));
    if (arg.text.startsWith('of=')) paths.push(use({ ...arg, text: arg.text.slice(3) }, 'write', 'dd of='));
  }
  return known(paths);
}

/** chmod, chown, chgrp: the operands after the mode or owner are written; setuid bits and recursion are hard limits. */
export function permissionEffects(name: string, rest: WordValue[], hazards: Hazard[], known: Known, unknown: Unknown): CommandEffects {
  const parsed = parseArgs(rest, { value: ['--reference', '--from'], long: ['--changes', '--silent', '--quiet', '--verbose', '--no-preserve-root', '--preserve-root', '--recursive', '--dereference', '--no-dereference'] });
  if (parsed.unknown.length > 0) return unknown(unknownOption(name, parsed.unknown[0]!));
  // find's {} hands every file under a root to the command: as recursive as -R.
  const recursive = hasOption(parsed, '-R', '--recursive') || parsed.operands.some((operand) => operand.subtree === true);
  if (recursive) hazards.push({ rule: 'baseline.recursive-permissions', reason: `recursive \`${name}\``, contained: true });
  const reference = hasOption(parsed, '--reference');
  const mode = reference ? undefined : parsed.operands[0];
  const files = reference ? parsed.operands : parsed.operands.slice(1);
  if (name === 'chmod' && mode !== undefined && setsSpecialBits(mode.text)) hazards.push({ rule: 'baseline.privilege', reason: 'chmod sets a set-user-id or set-group-id bit' });
  const paths = files.map((value) => use(value, 'write', name, recursive));
  if (reference) return unknown(`\`${name} --reference\` copies modes the guard cannot see`, paths);
  if (name !== 'chmod') return unknown(`\`${name}\` changes ownership`, paths);
  return known(paths);
}

/** Octal modes of any length with 4000 or 2000 set, or symbolic `+s`, `u+s`, `g=s`. */
export function setsSpecialBits(mode: string): boolean {
  if (/^[0-7]+$/.test(mode)) return (Number.parseInt(mode, 8) & 0o6000) !== 0;
  return /[+=][^,]*s/.test(mode);
}

/** mktemp makes a file in the run's private temp dir unless told to make it elsewhere. */
export function mktempEffects(rest: WordValue[], known: Known, unknown: Unknown): CommandEffects {
  const parsed = parseArgs(rest, { value: ['-p', '--tmpdir', '--suffix'], long: ['--directory', '--dry-run', '--quiet'] });
  if (parsed.unknown.length > 0) return unknown(unknownOption('mktemp', parsed.unknown[0]!));
  if (parsed.options.some((o) => o.name === '-p' || o.name === '--tmpdir' || o.name === '-t') || parsed.operands.some((v) => v.text.includes('/'))) {
    return unknown('`mktemp` with a directory or path writes where the guard did not look');
  }
  return known([]);
}

const TAR_VALUE = ['-f', '--file', '-C', '--directory', '-X', '--exclude-from', '-T', '--files-from', '-b', '--blocking-factor', '-H', '--format', '-I', '--use-compress-program', '-F', '--info-script', '--new-volume-script', '--to-command', '--checkpoint-action', '--rsh-command', '--rmt-command', '-K', '--starting-file', '-N', '--newer', '-g', '--listed-incremental', '-L', '--tape-length', '-V', '--label', '--exclude', '--strip-components', '--transform', '--xform', '--owner', '--group', '--mode', '--mtime', '--occurrence', '--record-size', '--warning', '--quoting-style'];
/** What listing an archive may use: the archive, its compression, how names print and which are shown. */
const TAR_LISTING = new Set(['-t', '--list', '-v', '--verbose', '-f', '--file', '-z', '--gzip', '--gunzip', '--ungzip', '-j', '--bzip2', '-J', '--xz', '--lzma', '--zstd', '--wildcards', '--no-wildcards', '--anchored', '--no-anchored', '--ignore-case', '--no-ignore-case', '--force-local', '--numeric-owner', '--full-time', '--utc', '--quiet', '--exclude', '--totals', '--show-transformed-names', '--null', '--no-null']);
const TAR_LONG = [...TAR_LISTING, '--extract', '--get', '--create', '--append', '--update', '--diff', '--compare', '--delete', '--concatenate', '--catenate', '--to-stdout', '--keep-old-files', '--overwrite', '--remove-files', '--unlink-first', '--recursive-unlink', '--absolute-names', '--dereference', '--hard-dereference', '--no-recursion', '--recursion', '--same-permissions', '--preserve-permissions', '--checkpoint', '--multi-volume', '--sparse', '--one-file-system', '--auto-compress', '--lzip', '--lzop', '--verify', '--ignore-zeros', '--ignore-failed-read', '--skip-old-files', '--keep-newer-files', '--no-same-owner', '--same-owner', '--no-same-permissions', '--touch', '--interactive', '--confirmation', '--verbatim-files-from', '--no-verbatim-files-from', '--exclude-vcs', '--exclude-vcs-ignores', '--exclude-backups', '--exclude-caches', '--index-file', '--posix', '--preserve-order', '--same-order', '--seek', '--no-seek', '--block-number', '--check-links', '--selinux', '--acls', '--xattrs', '--no-selinux', '--no-acls', '--no-xattrs'];

/**
 * tar: only listing an archive (`tar -tf x.tar`, `tar tzvf x.tgz`) is known, reading the
 * archive. Extracting writes files no argument names; creating reads whole trees; and
 * `-I`, `--to-command`, `--checkpoint-action`, `-F`, `--rsh-command` or an archive named
 * `host:file` run programs. Any of those, or an option not listed, makes it not known.
 */
export function tarEffects(rest: WordValue[], known: Known, unknown: Unknown): CommandEffects {
  // The traditional first word bundles flags without a dash: `tar tvf x.tar`.
  const args = rest[0] !== undefined && rest[0].unknown === undefined && /^[A-Za-z]+$/.test(rest[0].text) ? [{ ...rest[0], text: `-${rest[0].text}` }, ...rest.slice(1)] : rest;
  const parsed = parseArgs(args, { value: TAR_VALUE, long: TAR_LONG });
  const archives = optionValues(parsed, '-f', '--file');
  const reads = archives.filter((value) => value.text !== '-').map((value) => use(value, 'read', 'tar archive'));
  if (parsed.unknown.length > 0) return unknown(unknownOption('tar', parsed.unknown[0]!), reads);
  const other = parsed.options.find((option) => !TAR_LISTING.has(option.name));
  // What it archives is read whole: a secret named among the operands is read outright.
  const operands = parsed.operands.filter((value) => value.unknown === undefined).map((value) => use(value, 'read', 'tar operand', true));
  if (!hasOption(parsed, '-t', '--list') || other !== undefined) return unknown(`\`tar${other === undefined ? '' : ` ${other.name}`}\` does more than list an archive: it writes files, reads trees or runs programs`, [...reads, ...operands]);
  // `host:file` is an archive on another machine, reached through rsh.
  if (!hasOption(parsed, '--force-local') && archives.some((value) => value.text.includes(':'))) return unknown('`tar -f host:file` runs a remote shell', reads);
  return known(reads);
}
