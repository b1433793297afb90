import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runHooks, type HookPayload } from '../../src/guard/hooks.js';
import { hooksSchema, type HookEvent } from '../../src/policy/hooks-schema.js';
import { bashTool } from '../../src/tools/bash.js';
import { editTool } from '../../src/tools/edit.js';
import { globTool } from '../../src/tools/glob.js';
import { grepTool } from '../../src/tools/grep.js';
import { readTool } from '../../src/tools/read.js';
import { writeTool } from '../../src/tools/write.js';
import { PROJECT_ROOT } from '../support/cli.js';

// docs/claude-code.md tells a Claude Code user what their hooks get and may answer; every
// field corral really sends, and every tool_response field a tool really returns, is on it.

const doc = readFileSync(path.join(PROJECT_ROOT, 'docs/claude-code.md'), 'utf8');

describe('docs/claude-code.md', () => {
  it('leaves the settings to their own page and is linked from the README', () => {
    expect(doc).toContain('](claude-code-settings.md)');
    expect(readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8')).toContain('](docs/claude-code.md)');
  });

  it('names every field of the input hooks get, for each event', async () => {
    const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'corral-doc-hooks-')));
    try {
      const keys = new Set<string>();
      const payloads: Record<HookEvent, HookPayload> = {
        PreToolUse: { tool_name: 'Read', tool_input: { file_path: 'a' }, tool_use_id: 'toolu_1' },
        PostToolUse: { tool_name: 'Read', tool_input: { file_path: 'a' }, tool_use_id: 'toolu_1', tool_response: {} },
        Stop: { stop_hook_active: false },
      };
      for (const [event, payload] of Object.entries(payloads) as [HookEvent, HookPayload][]) {
        const config = hooksSchema.parse({ [event]: [{ hooks: [{ type: 'command', command: 'cat > stdin.json' }] }] });
        await runHooks(config, event, payload, { sessionId: 's', transcriptPath: 't', cwd: dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, signal: new AbortController().signal });
        for (const key of Object.keys(JSON.parse(readFileSync(path.join(dir, 'stdin.json'), 'utf8')))) keys.add(key);
      }
      expect([...keys].filter((key) => !doc.includes(`\`${key}\``))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("names every field of each tool's tool_response", async () => {
    const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'corral-doc-tools-')));
    const context = { worktree: dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, signal: new AbortController().signal, outputCap: 30_000, bashTimeoutMs: 10_000, bashMaxTimeoutMs: 10_000 };
    try {
      const outputs = [
        await writeTool.execute({ file_path: 'a.txt', content: 'x\n' }, context),
        await editTool.execute({ file_path: 'a.txt', old_string: 'x', new_string: 'y' }, context),
        await readTool.execute({ file_path: 'a.txt' }, context),
        await bashTool.execute({ command: 'true' }, context),
        await globTool.execute({ pattern: '*' }, context),
        await grepTool.execute({ pattern: 'y' }, context),
        await grepTool.execute({ pattern: 'y', output_mode: 'content' }, context),
        await grepTool.execute({ pattern: 'y', output_mode: 'count' }, context),
      ];
      const fields = (value: unknown): string[] =>
        value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.entries(value).flatMap(([key, inner]) => [key, ...fields(inner)]) : [];
      const named = new Set(outputs.flatMap((output) => fields(output.response)));
      expect([...named].filter((field) => !doc.includes(field))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names the answers a hook may give', () => {
    for (const answer of ['permissionDecision', 'updatedInput', 'additionalContext', '`continue: false`', 'stopReason', 'env_from_host', 'instructions: false']) expect(doc).toContain(answer);
  });
});
