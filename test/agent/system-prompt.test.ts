import { describe, expect, it } from 'vitest';
import { buildSystemPrompt } from '../../src/agent/system-prompt.js';

const ticket = { allow: ['src/**'], forbid: [], checks: [{ name: 'npm test', run: 'npm test', timeoutMs: 1000 }] };

describe('the system prompt', () => {
  it('tells a sandboxed model what it can write and whether it has a network', () => {
    expect(buildSystemPrompt(ticket, { network: false })).toContain('only this worktree and $TMPDIR (also /tmp) are writable, $HOME is a private empty folder, secret files read as empty, and there is no network.');
    expect(buildSystemPrompt(ticket, { network: true })).toContain('secret files read as empty.');
    expect(buildSystemPrompt(ticket)).not.toContain('sandbox');
  });

  it('sends an unsandboxed model to $TMPDIR for scratch files, not the shared /tmp', () => {
    expect(buildSystemPrompt(ticket)).toContain('Put scratch files in $TMPDIR');
    expect(buildSystemPrompt(ticket, { network: false })).not.toContain('shared with the machine');
  });
});
