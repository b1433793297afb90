import { describe, expect, it } from 'vitest';
import { parsePattern } from '../../src/policy/pattern-syntax.js';
import { CORRAL_TOOLS } from '../../src/policy/tool-names.js';
import { TOOL_NAMES } from '../../src/tools/types.js';

describe('rule tool names', () => {
  it('knows exactly the tools corral has', () => {
    expect([...CORRAL_TOOLS].sort()).toEqual([...TOOL_NAMES].sort());
  });

  it('refuses an unknown tool with a case-insensitive did-you-mean, and keeps other agents\' and MCP tools', () => {
    expect(parsePattern('bash(ls)')).toMatch(/`bash` is not a tool.*did you mean `Bash`/);
    expect(parsePattern('Bahs(rm:*)')).toMatch(/did you mean `Bash`/);
    expect(parsePattern('WEBFETCH')).toMatch(/did you mean `WebFetch`/);
    expect(parsePattern('Frob(x)')).toMatch(/`Frob` is not a tool/);
    for (const kept of ['WebFetch(domain:example.com)', 'WebSearch', 'mcp__puppeteer', 'mcp__puppeteer__puppeteer_navigate', 'mcp__my-server__*', 'Task(Explore)', 'NotebookEdit']) {
      expect(parsePattern(kept)).toMatchObject({ tool: expect.any(String) });
    }
  });
});
