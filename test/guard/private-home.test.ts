import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makePrivateHome } from '../../src/guard/sandbox/private-home.js';
import { tempDir } from '../support/repo.js';

const PATH = process.env.PATH ?? '/usr/bin:/bin';

// Without bubblewrap the sandbox tests are skipped; the private home is made the same way
// with or without it, so its identity is checked here too.
describe('the private home', () => {
  it("carries the user's name and email and nothing else of their git config", async () => {
    const userHome = tempDir('corral-user-home-');
    writeFileSync(path.join(userHome, '.gitconfig'), '[user]\n\tname = Home User\n\temail = home@example.com\n[credential]\n\thelper = store\n');
    const dir = path.join(tempDir('corral-private-'), 'home');
    await makePrivateHome(dir, userHome, PATH);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readFileSync(path.join(dir, '.gitconfig'), 'utf8')).toBe('[user]\n\tname = "Home User"\n\temail = "home@example.com"\n');
  });

  it("falls back to corral's identity for what the user's config does not name", async () => {
    const userHome = tempDir('corral-user-home-');
    writeFileSync(path.join(userHome, '.gitconfig'), '[user]\n\temail = only@example.com\n');
    const dir = path.join(tempDir('corral-private-'), 'home');
    await makePrivateHome(dir, userHome, PATH);
    expect(readFileSync(path.join(dir, '.gitconfig'), 'utf8')).toBe('[user]\n\temail = "only@example.com"\n\tname = "corral"\n');
  });
});
