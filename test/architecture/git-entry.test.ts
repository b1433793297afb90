import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { SRC, sourceFiles } from './layers.js';

// Every git process corral starts goes through src/git/ (its hardened environment: no
// hooks, fsmonitor, filters, global or system config). This finds, with TypeScript's own
// parser, every call that starts `git` as a program anywhere else in src/.


/** Functions that start the program their first argument names (a shell line, for exec). */
const STARTERS = new Set(['runProgram', 'spawn', 'spawnSync', 'execFile', 'execFileSync', 'exec', 'execSync', 'fork', 'execa', 'execaSync']);

/** Whether a program name (or a shell line's first word) is git, by any path. */
function namesGit(program: string): boolean {
  const first = program.trim().split(/\s+/)[0] ?? '';
  return /^git(\.exe)?$/.test(path.basename(first));
}

/** `line: call` for every call in `text` that starts git. */
function gitStarts(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  // Constants holding a string, so `const GIT = 'git'; spawn(GIT, …)` is seen too.
  const constants = new Map<string, string>();
  const found: string[] = [];
  const stringOf = (node: ts.Expression | undefined): string | undefined => {
    if (node === undefined) return undefined;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
    if (ts.isTemplateExpression(node)) return node.head.text;
    if (ts.isIdentifier(node)) return constants.get(node.text);
    if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node)) return stringOf(node.expression);
    return undefined;
  };
  const calleeName = (callee: ts.Expression): string | undefined => {
    if (ts.isIdentifier(callee)) return callee.text;
    if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
    return undefined;
  };
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name)) {
      const value = stringOf(node.initializer);
      if (value !== undefined) constants.set(node.name.text, value);
    }
    if (ts.isCallExpression(node)) {
      const name = calleeName(node.expression);
      const program = stringOf(node.arguments[0]);
      if (name !== undefined && STARTERS.has(name) && program !== undefined && namesGit(program)) {
        const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
        found.push(`${line + 1}: ${node.getText(source).split('\n')[0]}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('one entry for git', () => {
  it('finds git started in every form a file could write it', () => {
    const text = [
      "import { spawn } from 'node:child_process';",
      "import * as cp from 'node:child_process';",
      "const GIT = 'git';",
      "runProgram('git', ['status']);",
      'spawn(GIT, []);',
      "cp.execFileSync('/usr/bin/git', ['log']);",
      'execSync(`git config --global user.name`);',
      "execa('git' as string, []);",
      "runProgram('bwrap', ['--help']);",
      "spawn('gitk', []);",
      "log('git', 'is not started here');",
    ].join('\n');
    expect(gitStarts('sample.ts', text).map((hit) => Number(hit.split(':')[0]))).toEqual([4, 5, 6, 7, 8]);
  });

  it('sees the git calls of src/git/ itself, so the scan reads real code', () => {
    const inGit = sourceFiles(path.join(SRC, 'git')).flatMap((file) => gitStarts(file, readFileSync(file, 'utf8')));
    expect(inGit.length).toBeGreaterThan(0);
  });

  it('starts git nowhere in src/ outside src/git/', () => {
    const outside = sourceFiles(SRC)
      .filter((file) => !file.startsWith(path.join(SRC, 'git') + path.sep))
      .flatMap((file) => gitStarts(file, readFileSync(file, 'utf8')).map((hit) => `${path.relative(SRC, file)}:${hit}`));
    expect(outside).toEqual([]);
  });
});
