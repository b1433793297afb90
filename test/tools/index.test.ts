import { describe, expect, test } from 'vitest';
import { parseToolCall, TOOLS, toolSpecs } from '../../src/tools/index.js';
import { TOOL_NAMES } from '../../src/tools/types.js';

describe('tool registry', () => {
  test('has every tool of the protocol, once', () => {
    expect(TOOLS.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES].sort());
  });

  test('specs carry the protocol field names as object schemas without $schema', () => {
    const specs = toolSpecs();
    for (const spec of specs) {
      expect(spec.input_schema.type).toBe('object');
      expect(spec.input_schema).not.toHaveProperty('$schema');
      expect(spec.description.length).toBeGreaterThan(20);
    }
    const fields = Object.fromEntries(specs.map((spec) => [spec.name, Object.keys(spec.input_schema.properties as object)]));
    expect(fields).toEqual({
      Bash: ['command', 'timeout', 'description'],
      Read: ['file_path', 'offset', 'limit'],
      Write: ['file_path', 'content'],
      Edit: ['file_path', 'old_string', 'new_string', 'replace_all'],
      Glob: ['pattern', 'path'],
      Grep: ['pattern', 'path', 'glob', 'output_mode', '-i', '-n', '-A', '-B', '-C', 'head_limit', 'multiline'],
    });
    const edit = specs.find((spec) => spec.name === 'Edit')!;
    expect(edit.input_schema.required).toEqual(['file_path', 'old_string', 'new_string']);
  });

  test('parses a valid call', () => {
    const parsed = parseToolCall('Read', { file_path: 'a.ts', offset: 3 });
    expect(parsed.ok).toBe(true);
    if (parsed.ok) {
      expect(parsed.tool.name).toBe('Read');
      expect(parsed.input).toEqual({ file_path: 'a.ts', offset: 3 });
    }
  });

  test('an unknown tool names the known ones', () => {
    expect(parseToolCall('WebFetch', {})).toEqual({ ok: false, unknown: true, error: 'Unknown tool "WebFetch". The tools are: Bash, Read, Write, Edit, Glob, Grep.' });
  });

  test('a schema mismatch lists each bad field', () => {
    const parsed = parseToolCall('Read', { path: 'a.ts', offset: 0 });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.error).toContain('Invalid input for Read:');
      expect(parsed.error).toMatch(/- file_path: .*expected string/);
      expect(parsed.error).toMatch(/- offset: .*>=1/);
      expect(parsed.error).toMatch(/- \(input\): Unrecognized key: "path"/);
    }
  });

  test('input that is not an object is a readable error', () => {
    const parsed = parseToolCall('Bash', 'ls');
    expect(parsed).toMatchObject({ ok: false });
    if (!parsed.ok) expect(parsed.error).toContain('- (input): ');
  });
});
