import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONFIG_SCHEMA_ID, configFileSchema, configJsonSchema } from '../../src/config/schema.js';
import { prepareConditions } from '../../src/policy/conditions.js';

// The published schema is generated from the zod schema. Regenerate it with
//   UPDATE_SCHEMA=1 npx vitest run test/config/schema-file.test.ts
const schemaFile = fileURLToPath(new URL('../../schema/config.schema.json', import.meta.url));

describe('schema/config.schema.json', () => {
  it('is the JSON Schema generated from the config schema', () => {
    const generated = configJsonSchema();
    if (process.env['UPDATE_SCHEMA'] === '1') fs.writeFileSync(schemaFile, `${JSON.stringify(generated, null, 2)}\n`);
    expect(JSON.parse(fs.readFileSync(schemaFile, 'utf8'))).toEqual(generated);
  });

  it('names itself and rejects unknown fields', () => {
    const schema = configJsonSchema();
    expect(schema['$id']).toBe(CONFIG_SCHEMA_ID);
    expect(schema['title']).toBe('corral config');
    expect(schema['additionalProperties']).toBe(false);
  });

  it('accepts the project config committed at the repository root', async () => {
    const text = fs.readFileSync(fileURLToPath(new URL('../../corral.yaml', import.meta.url)), 'utf8');
    expect(text.split('\n')[0]).toBe('# yaml-language-server: $schema=schema/config.schema.json');
    const data: unknown = parse(text);
    await prepareConditions(data);
    expect(configFileSchema.safeParse(data).success).toBe(true);
  });
});
