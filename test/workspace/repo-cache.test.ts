import { existsSync, mkdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { clearRepoCache, nodeModulesKey, openRepoCache, restoreNodeModules, storeNodeModules } from '../../src/workspace/repo-cache.js';
import { repoWithFiles, tempDir } from '../support/repo.js';

describe('the repository cache', () => {
  it('is one folder per repository under XDG_CACHE_HOME, and clean removes it', async () => {
    const cacheHome = tempDir('corral-cache-');
    const repo = repoWithFiles({ 'a.txt': 'a\n' });
    const cache = await openRepoCache(repo, { XDG_CACHE_HOME: cacheHome });
    expect(cache?.dir.startsWith(path.join(cacheHome, 'corral', 'repos', path.basename(repo)))).toBe(true);
    expect((await openRepoCache(repo, { XDG_CACHE_HOME: cacheHome }))?.dir).toBe(cache?.dir);
    expect((await openRepoCache(repoWithFiles({ 'a.txt': 'a\n' }), { XDG_CACHE_HOME: cacheHome }))?.dir).not.toBe(cache?.dir);
    expect(await openRepoCache(repo, {})).toBeNull();
    expect(await clearRepoCache(repo, { XDG_CACHE_HOME: cacheHome })).toBe(cache?.dir);
    expect(existsSync(cache!.dir)).toBe(false);
  });

  it('keys node_modules by the lockfile, package.json and the setup commands', async () => {
    const dir = tempDir('corral-wt-');
    expect(await nodeModulesKey(dir, ['npm ci'])).toBeNull();
    writeFileSync(path.join(dir, 'package-lock.json'), '{}');
    const key = await nodeModulesKey(dir, ['npm ci']);
    expect(key).toMatch(/^[0-9a-f]{32}$/);
    expect(await nodeModulesKey(dir, ['npm ci --omit=dev'])).not.toBe(key);
    writeFileSync(path.join(dir, 'package.json'), '{"name": "x"}');
    expect(await nodeModulesKey(dir, ['npm ci'])).not.toBe(key);
  });

  it('stores and restores a copy (links as links, never the same files), and removes half copies of dead runs', async () => {
    const cache = (await openRepoCache(repoWithFiles({ 'a.txt': 'a\n' }), { XDG_CACHE_HOME: tempDir('corral-cache-') }))!;
    const first = tempDir('corral-wt-');
    mkdirSync(path.join(first, 'node_modules', 'dep'), { recursive: true });
    mkdirSync(path.join(first, 'node_modules', '.bin'));
    writeFileSync(path.join(first, 'node_modules', 'dep', 'index.js'), 'module.exports = 1;\n');
    symlinkSync('../dep/index.js', path.join(first, 'node_modules', '.bin', 'dep'));
    const dead = path.join(cache.nodeModules, '.partial-2147483646-abcd');
    mkdirSync(dead);
    expect(await storeNodeModules(cache, 'k', first)).toBe(true);
    expect(existsSync(dead)).toBe(false);
    expect(await storeNodeModules(cache, 'k', first)).toBe(false);

    const second = tempDir('corral-wt-');
    expect(await restoreNodeModules(cache, 'k', second)).toBe(true);
    const restored = path.join(second, 'node_modules', 'dep', 'index.js');
    expect(readFileSync(restored, 'utf8')).toBe('module.exports = 1;\n');
    expect(statSync(restored).ino).not.toBe(statSync(path.join(cache.nodeModules, 'k', 'dep', 'index.js')).ino);
    expect(readlinkSync(path.join(second, 'node_modules', '.bin', 'dep'))).toBe('../dep/index.js');
    // A worktree that has node_modules already (tracked) is left alone.
    expect(await restoreNodeModules(cache, 'k', second)).toBe(false);
    expect(await restoreNodeModules(cache, 'other', tempDir('corral-wt-'))).toBe(false);
  });
});
