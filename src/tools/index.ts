import { z } from 'zod';
import { bashTool } from './bash.js';
import { editTool } from './edit.js';
import { globTool } from './glob.js';
import { grepTool } from './grep.js';
import { readTool } from './read.js';
import type { ToolDefinition } from './types.js';
import { writeTool } from './write.js';

/** A tool as the model API takes it: name, description and the JSON Schema of its input. */
export interface ToolSpec {
  name: string;
  description: string;
  input_schema: { type: 'object'; [key: string]: unknown };
}

// The tools the model gets, in the order it sees them.
export const TOOLS: readonly ToolDefinition<any>[] = [bashTool, readTool, writeTool, editTool, globTool, grepTool];

/** The tool list for the model API: one schema per tool serves the model and the runtime parse. */
export function toolSpecs(): ToolSpec[] {
  return TOOLS.map((tool) => {
    const { $schema: _dialect, ...schema } = z.toJSONSchema(tool.input) as Record<string, unknown>;
    return { name: tool.name, description: tool.description, input_schema: { ...schema, type: 'object' } };
  });
}

/** A call checked against its tool; `unknown` when it names no tool at all. */
export type ParsedToolCall = { ok: true; tool: ToolDefinition<any>; input: unknown } | { ok: false; unknown: boolean; error: string };

/** Finds the tool and checks the model's input against its schema; errors are written for the model to fix its call. */
export function parseToolCall(name: string, input: unknown): ParsedToolCall {
  const tool = TOOLS.find((candidate) => candidate.name === name);
  if (!tool) {
    return { ok: false, unknown: true, error: `Unknown tool "${name}". The tools are: ${TOOLS.map((t) => t.name).join(', ')}.` };
  }
  const parsed = tool.input.safeParse(input);
  if (parsed.success) return { ok: true, tool, input: parsed.data };
  const problems = parsed.error.issues.map((issue) => `- ${issue.path.length > 0 ? issue.path.join('.') : '(input)'}: ${issue.message}`);
  return { ok: false, unknown: false, error: `Invalid input for ${tool.name}:\n${problems.join('\n')}` };
}
