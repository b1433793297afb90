import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TICKET_SCHEMA_ID, ticketJsonSchema } from '../../src/ticket/schema.js';

// The published schema is generated from the zod schema. Regenerate it with
//   UPDATE_SCHEMA=1 npx vitest run test/ticket/schema-file.test.ts
const schemaFile = fileURLToPath(new URL('../../schema/ticket.schema.json', import.meta.url));

describe('schema/ticket.schema.json', () => {
  it('is the JSON Schema generated from the ticket schema', () => {
    const generated = ticketJsonSchema();
    if (process.env['UPDATE_SCHEMA'] === '1') fs.writeFileSync(schemaFile, `${JSON.stringify(generated, null, 2)}\n`);

    const committed: unknown = JSON.parse(fs.readFileSync(schemaFile, 'utf8'));

    expect(committed).toEqual(generated);
  });

  it('names itself and rejects unknown fields', () => {
    const schema = ticketJsonSchema();
    expect(schema['$schema']).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema['$id']).toBe(TICKET_SCHEMA_ID);
    expect(schema['title']).toBe('corral ticket');
    expect(schema['additionalProperties']).toBe(false);
    expect(schema['required']).toEqual(['task', 'allow']);
  });
});
