import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { NO_USER_CONFIG, PROJECT_ROOT, runCli, runReport } from '../support/cli.js';
import { gitIn, tempDir } from '../support/repo.js';

// What a team gets: the tarball `npm pack` makes, installed as a pinned dev dependency into a
// repository of its own, with nothing from this checkout on the way. The install is offline:
// tests never reach the network. A fresh `npm install <tarball>` would have to ask the registry
// to resolve corral's dependencies, so the team repository gets the lockfile a team would
// commit instead: corral's production entries of this checkout's package-lock.json (the same
// resolution, whose tarballs `npm ci` here put in npm's cache), and `npm ci --offline` installs
// from it. `npm ls` then checks that tree against what the tarball's package.json asks for.

interface PackedFile {
  path: string;
  size: number;
}

interface LockEntry {
  dev?: boolean;
  [field: string]: unknown;
}

const NPM_QUIET = ['--no-audit', '--no-fund', '--no-update-notifier'];

/** A lockfile for `team` depending on the tarball, with corral's production tree from this checkout's lockfile. */
function teamLockfile(tarballSpec: string, tarball: string): object {
  const manifest = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8'));
  const lock = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const packages: Record<string, unknown> = {
    '': { name: 'team-app', devDependencies: { corral: tarballSpec } },
    'node_modules/corral': {
      version: manifest.version,
      resolved: tarballSpec,
      integrity: `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`,
      dev: true,
      license: manifest.license,
      dependencies: manifest.dependencies,
      bin: manifest.bin,
      engines: manifest.engines,
    },
  };
  for (const [location, entry] of Object.entries(lock.packages)) {
    // Everything corral's own dependencies need is dev to the team, as corral is.
    if (location !== '' && entry.dev !== true) packages[location] = { ...entry, dev: true };
  }
  return { name: 'team-app', lockfileVersion: 3, requires: true, packages };
}

describe('the package: npm pack, installed offline into a team repository', () => {
  let files: PackedFile[];
  let team: string;
  let installed: string;
  let install: { stdout: string; stderr: string };

  beforeAll(async () => {
    const packDir = tempDir('corral-pack-');
    // --ignore-scripts: `prepare` would rebuild dist/bundle while other test files run the
    // CLI from it; `npm test` has just built it.
    const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', packDir], { cwd: PROJECT_ROOT, encoding: 'utf8' }));
    files = packed[0].files;
    const tarball = path.join(packDir, packed[0].filename);

    team = tempDir('corral-team-');
    cpSync(path.join(PROJECT_ROOT, 'tickets'), path.join(team, 'tickets'), { recursive: true });
    cpSync(path.join(PROJECT_ROOT, 'fixtures'), path.join(team, 'fixtures'), { recursive: true });
    const spec = `file:${path.relative(team, tarball)}`;
    writeFileSync(path.join(team, 'package.json'), `${JSON.stringify({ name: 'team-app', private: true, devDependencies: { corral: spec } }, null, 2)}\n`);
    writeFileSync(path.join(team, 'package-lock.json'), `${JSON.stringify(teamLockfile(spec, tarball), null, 2)}\n`);
    writeFileSync(path.join(team, '.gitignore'), 'node_modules/\n.corral/\n');
    gitIn(team, ['init', '-q']);
    gitIn(team, ['add', '-A']);
    gitIn(team, ['commit', '-qm', 'team repository']);

    const ci = await execa('npm', ['ci', '--offline', ...NPM_QUIET], { cwd: team, reject: false, timeout: 180_000 });
    if (ci.exitCode !== 0) {
      throw new Error(`npm ci --offline failed (corral's dependencies must be in npm's cache: run npm ci in the checkout first):\n${ci.stderr}`);
    }
    install = { stdout: ci.stdout, stderr: ci.stderr };
    installed = path.join(team, 'node_modules', 'corral');
  }, 240_000);

  it('holds what runs, the schemas, the docs, README, LICENSE and CHANGELOG, and no tsc output', () => {
    const names = files.map((f) => f.path).sort();
    const unexpected = names.filter(
      (name) => !/^(package\.json|README\.md|LICENSE|CHANGELOG\.md|bin\/(corral|load-bundle)\.cjs|dist\/bundle\/([^/]+\.cjs(\.map)?|builtins\.json)|schema\/[^/]+\.(json|xsd)|docs\/.+)$/.test(name),
    );
    expect(unexpected).toEqual([]);
    for (const name of ['README.md', 'LICENSE', 'CHANGELOG.md', 'bin/corral.cjs', 'bin/load-bundle.cjs', 'dist/bundle/corral.cjs', 'dist/bundle/builtins.json', 'schema/config.schema.json', 'schema/ticket.schema.json']) {
      expect(names).toContain(name);
    }
    // Every chunk the build made, and none of the code caches a run here wrote beside them.
    const chunks = readdirSync(path.join(PROJECT_ROOT, 'dist/bundle')).filter((f) => f.endsWith('.cjs'));
    expect(names.filter((n) => n.startsWith('dist/bundle/') && n.endsWith('.cjs')).sort()).toEqual(chunks.map((c) => `dist/bundle/${c}`).sort());
    expect(readFileSync(path.join(installed, 'LICENSE'), 'utf8')).toContain('MIT License');
  });

  it('ships every docs page the source sends a user to', () => {
    const pointedAt = new Set<string>();
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(full);
        else if (entry.name.endsWith('.ts')) for (const match of readFileSync(full, 'utf8').matchAll(/docs\/[\w-]+\.md/g)) pointedAt.add(match[0]);
      }
    };
    walk(path.join(PROJECT_ROOT, 'src'));
    expect([...pointedAt]).toContain('docs/guard.md');
    for (const page of pointedAt) expect(existsSync(path.join(installed, page)), page).toBe(true);
  });

  it('installs without an install script anywhere in its dependency tree', async () => {
    expect(`${install.stdout}\n${install.stderr}`).not.toMatch(/install[- ]scripts?/i);
    const withScripts = await execa('npm', ['query', ':attr(scripts, [preinstall]), :attr(scripts, [install]), :attr(scripts, [postinstall])'], { cwd: team });
    expect(JSON.parse(withScripts.stdout).map((p: { name: string }) => p.name)).toEqual([]);
    // The installed tree is the one the tarball's package.json asks for, nothing missing.
    const ls = await execa('npm', ['ls', '--all', '--offline'], { cwd: team, reject: false });
    expect(ls.stderr).toBe('');
    expect(ls.exitCode).toBe(0);
  });

  it('runs from a read-only install, and leaves it as it was', async () => {
    const bundle = path.join(installed, 'dist/bundle');
    const before = readdirSync(bundle).sort();
    chmodSync(installed, 0o555);
    for (const dir of [path.join(installed, 'bin'), bundle]) chmodSync(dir, 0o555);
    try {
      // root writes into a read-only folder all the same, so as root the run is made as
      // nobody, who may enter the (private) temp folders but write in none of them.
      const asRoot = process.getuid?.() === 0;
      const asUser = asRoot ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : [];
      const home = tempDir('corral-home-');
      if (asRoot) for (const dir of [team, home]) chmodSync(dir, 0o755);
      const [file, ...args] = [...asUser, path.join(team, 'node_modules/.bin/corral'), 'explain', 'ls -la | wc -l', '--json'];
      const run = await execa(file!, args, {
        cwd: team,
        env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: NO_USER_CONFIG },
        extendEnv: false,
        reject: false,
        timeout: 60_000,
      });
      expect(run.stderr).toBe('');
      expect(run.exitCode).toBe(0);
      // The shell parser ran: its grammar is found and loads from the installed packages.
      const verdict = JSON.parse(run.stdout);
      expect(verdict.decision).toMatchObject({ effect: 'allow', rule: 'baseline.read-only' });
      expect(verdict.commands.map((c: { argv: string[] }) => c.argv)).toEqual([['ls', '-la'], ['wc', '-l']]);
      expect(readdirSync(bundle).sort()).toEqual(before);
    } finally {
      for (const dir of [installed, path.join(installed, 'bin'), bundle]) chmodSync(dir, 0o755);
    }
  });

  it('runs a demo ticket offline from node_modules/.bin/corral, exit 0', async () => {
    const run = await runCli(['run', 'tickets/cap-fine.yaml', '--json'], { cwd: team, bin: path.join(team, 'node_modules/.bin/corral') });
    expect(run.stderr).not.toContain('internal error');
    expect(runReport(run.stdout)).toMatchObject({ status: 'passed', exitCode: 0 });
    expect(run.exitCode).toBe(0);
    // The way the docs call it: npm finds the pinned copy and downloads nothing.
    const exec = await execa('npm', ['exec', '--no', '--offline', '--', 'corral', '--version'], { cwd: team, reject: false });
    expect(exec.stdout.trim()).toBe(JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')).version);
  });

  it('has corral init point $schema at the installed schemas, by a path every clone shares', async () => {
    const init = await runCli(['init'], { cwd: team, bin: path.join(team, 'node_modules/.bin/corral') });
    expect(init.exitCode).toBe(0);
    for (const file of ['corral.yaml', 'tickets/example.yaml']) {
      const line = readFileSync(path.join(team, file), 'utf8').split('\n')[0]!;
      const reference = /^# yaml-language-server: \$schema=(.+)$/.exec(line)?.[1];
      expect(reference, file).toMatch(/^(\.\.\/)?node_modules\/corral\/schema\/(config|ticket)\.schema\.json$/);
      expect(existsSync(path.resolve(team, path.dirname(file), reference!)), reference).toBe(true);
    }
  });
});
