import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { policyTestsJsonSchema } from '../../src/run/policy-test.js';

// Generated from the zod schema. Regenerate with
//   UPDATE_SCHEMA=1 npx vitest run test/guard/schema-file.test.ts
const schemaFile = fileURLToPath(new URL('../../schema/policy-tests.schema.json', import.meta.url));

describe('schema/policy-tests.schema.json', () => {
  it('is the JSON Schema generated from the policy test file schema', () => {
    const generated = policyTestsJsonSchema();
    if (process.env['UPDATE_SCHEMA'] === '1') fs.writeFileSync(schemaFile, `${JSON.stringify(generated, null, 2)}\n`);
    expect(JSON.parse(fs.readFileSync(schemaFile, 'utf8'))).toEqual(generated);
  });
});
