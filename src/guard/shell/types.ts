import type { WordValue } from './words.js';

/** A redirection of one simple command: what it opens and how. */
export interface Redirect {
  operator: string;
  /** Possible targets; empty for a descriptor copy such as `2>&1` or a heredoc. */
  targets: WordValue[];
  access: 'read' | 'write' | 'readwrite' | 'none';
}

/** One simple command as it will run: argv after expansion, where it runs, what it opens. */
export interface SimpleCommand {
  /** argv[0] is the command name; an empty list is a bare redirection such as `> file`. */
  args: WordValue[];
  /** The directory it runs in; null when the script makes it unknowable. */
  cwd: string | null;
  /** Variables set for this command only (`A=1 cmd`, `env A=1 cmd`). */
  assignments: Map<string, WordValue[]>;
  redirects: Redirect[];
  /** Wrappers peeled off to reach it, outermost first: `timeout`, `bash -c`, `find -exec`. */
  via: string[];
  /** The source text it came from. */
  source: string;
}

export interface ShellAnalysis {
  commands: SimpleCommand[];
  /** Why part of the script cannot be judged; any entry keeps the call from being allowed outright. */
  problems: string[];
}

export interface AnalyseOptions {
  cwd: string;
  /** The environment the command will see: `$HOME`, `$TMPDIR`, `$USER` and friends. */
  env: Record<string, string>;
  /** Scripts longer than this are not analysed at all. */
  maxLength?: number;
}
