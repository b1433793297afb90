import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { instructionDirs, isInstructionFileName, loadInstructions, type TreeEntry } from '../../src/agent/instructions.js';
import { buildSystemPrompt } from '../../src/agent/system-prompt.js';
import { gitIn, repoWithFiles } from '../support/repo.js';

const head = (repo: string): string => gitIn(repo, ['rev-parse', 'HEAD']).trim();

describe('instructionDirs: the folders on the way to the files in play', () => {
  it('takes the literal start of each allow glob, root first, shallow before deep', () => {
    expect(instructionDirs(['src/api/**', 'docs/*.md', 'README.md', 'lib/**/x.ts', '**'])).toEqual(['', 'docs', 'lib', 'src', 'src/api']);
    expect(instructionDirs(['packages/web/src/app.ts'])).toEqual(['', 'packages', 'packages/web', 'packages/web/src']);
    expect(instructionDirs(['./a/{b,c}/**', '../x/**'])).toEqual(['', 'a']);
  });
});

describe('loadInstructions: read at the base commit, as Codex and Claude Code read them', () => {
  it('root AGENTS.md, CLAUDE.md files, then nested AGENTS.md nearest the allow paths; override first; empty and off-path files skipped', async () => {
    const repo = repoWithFiles({
      'AGENTS.md': 'root rules\n',
      'CLAUDE.md': 'claude rules\n',
      '.claude/CLAUDE.md': 'more claude rules\n',
      'src/AGENTS.md': '   \n',
      'src/api/AGENTS.md': 'api rules\n',
      'src/api/AGENTS.override.md': 'api override\n',
      'docs/AGENTS.md': 'docs rules: not in play\n',
    });
    const found = await loadInstructions(repo, head(repo), ['src/api/**']);
    expect(found.files.map((file) => [file.path, file.text])).toEqual([
      ['AGENTS.md', 'root rules\n'],
      ['CLAUDE.md', 'claude rules\n'],
      ['.claude/CLAUDE.md', 'more claude rules\n'],
      ['src/api/AGENTS.override.md', 'api override\n'],
    ]);
    expect(found.omitted).toEqual([]);
  });

  it('reads the commit, not the working tree; follows a symlink once and never reads a file twice', async () => {
    const repo = repoWithFiles({ 'AGENTS.md': 'committed\n' });
    symlinkSync('AGENTS.md', path.join(repo, 'CLAUDE.md'));
    gitIn(repo, ['add', 'CLAUDE.md']);
    gitIn(repo, ['commit', '-qm', 'link']);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(path.join(repo, 'AGENTS.md'), 'uncommitted\n');
    const found = await loadInstructions(repo, head(repo), ['**']);
    expect(found.files.map((file) => [file.path, file.text])).toEqual([['AGENTS.md', 'committed\n']]);
  });

  it('keeps them within the bound: the file that crosses it is cut, later ones are named as left out', async () => {
    const repo = repoWithFiles({ 'AGENTS.md': `${'é'.repeat(30)}\n`, 'src/AGENTS.md': 'nested\n' });
    const found = await loadInstructions(repo, head(repo), ['src/**'], { maxBytes: 21 });
    expect(found.files).toEqual([{ path: 'AGENTS.md', text: 'é'.repeat(10), bytes: 61, cut: true }]);
    expect(found.omitted).toEqual(['src/AGENTS.md']);
    const prompt = buildSystemPrompt({ allow: ['src/**'], forbid: [], checks: [] }, undefined, found);
    expect(prompt).toContain(`<instructions path="AGENTS.md">\n${'é'.repeat(10)}\n[Cut here: the file is 61 bytes`);
    expect(prompt).toContain('Left out to keep the instructions under 32 KiB: src/AGENTS.md.');
  });

  it('a repository without any gives nothing, and the prompt says nothing of them', async () => {
    const repo = repoWithFiles({ 'README.md': 'hi\n' });
    const found = await loadInstructions(repo, head(repo), ['**']);
    expect(found).toEqual({ files: [], omitted: [] });
    expect(buildSystemPrompt({ allow: ['**'], forbid: [], checks: [] }, undefined, found)).not.toContain('AGENTS.md');
  });

  it('found from the preflight listing of the whole tree, as from git: the same files, link targets included', async () => {
    const repo = repoWithFiles({
      'AGENTS.md': 'root rules\n',
      'docs/guide.md': 'guide\n',
      'src/api/AGENTS.md': 'api rules\n',
      'src/CLAUDE.md/x.txt': 'a folder named like an instruction file\n',
    });
    symlinkSync('docs/guide.md', path.join(repo, 'CLAUDE.md'));
    gitIn(repo, ['add', 'CLAUDE.md']);
    gitIn(repo, ['commit', '-qm', 'link']);
    const commit = head(repo);
    const listing = gitIn(repo, ['ls-tree', '-r', '-z', '--full-tree', commit]);
    const listed = new Map<string, TreeEntry>();
    for (const record of listing.split('\0')) {
      const [meta, file] = record.split('\t');
      const [mode, type, oid] = (meta ?? '').split(' ');
      if (file && mode && type && oid && isInstructionFileName(file)) listed.set(file, { mode, type, oid });
    }
    expect([...listed.keys()].sort()).toEqual(['AGENTS.md', 'CLAUDE.md', 'src/api/AGENTS.md']);
    const fromGit = await loadInstructions(repo, commit, ['src/api/**']);
    expect(fromGit.files.map((file) => file.path)).toEqual(['AGENTS.md', 'CLAUDE.md', 'src/api/AGENTS.md']);
    expect(await loadInstructions(repo, commit, ['src/api/**'], { listed })).toEqual(fromGit);
    // The listing is what is read: an entry it names is used as given.
    const other = new Map(listed);
    other.set('AGENTS.md', listed.get('src/api/AGENTS.md')!);
    const fromListing = await loadInstructions(repo, commit, ['**'], { listed: other });
    expect(fromListing.files.map((file) => [file.path, file.text])).toEqual([['AGENTS.md', 'api rules\n'], ['CLAUDE.md', 'guide\n']]);
  });
});
