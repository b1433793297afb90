import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readGlobalIdentity } from '../../src/git/git.js';
import { makeTempDir } from '../ticket/temp-repo.js';

const PATH = process.env.PATH ?? '/usr/bin:/bin';

describe('readGlobalIdentity', () => {
  it("reads the user's name and email from their global config, the last one winning, and follows no include", async () => {
    const home = makeTempDir();
    const included = path.join(home, 'included');
    writeFileSync(included, '[user]\n\tname = From An Include\n\temail = include@example.com\n');
    writeFileSync(
      path.join(home, '.gitconfig'),
      `[user]\n\tname = First\n[include]\n\tpath = ${included}\n[credential]\n\thelper = store\n[user]\n\tname = Ada Lovelace\n\temail = ada@example.com\n`,
    );
    expect(await readGlobalIdentity(home, PATH)).toEqual({ name: 'Ada Lovelace', email: 'ada@example.com' });
  });

  it('says nothing for a home without a git config, or with an empty name', async () => {
    expect(await readGlobalIdentity(makeTempDir(), PATH)).toEqual({});
    const home = makeTempDir();
    writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = \n\temail = only@example.com\n');
    expect(await readGlobalIdentity(home, PATH)).toEqual({ email: 'only@example.com' });
  });
});
