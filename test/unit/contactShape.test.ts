/**
 * The Contact shape is defined once (domain/contactShape.ts): the read path's JSON builder
 * (db/contactRead.ts CONTACT_JSON_SQL) takes its keys from the schema, and the field catalog's
 * built-in paths (domain/contactCatalog.ts) name properties of that shape.
 */
import { describe, expect, it } from 'vitest';
import type { TObject } from '@sinclair/typebox';
import { CompanySummary, ContactSchema } from '../../domain/contactShape.js';
import { BUILTIN_CONTACT_FIELDS } from '../../domain/contactCatalog.js';
import { CONTACT_JSON_SQL } from '../../db/contactRead.js';

/** The `'key', value` keys of a json_build_object, outermost first then the nested ones, in order. */
const builtKeys = (sqlText: string) => [...sqlText.matchAll(/(?:json_build_object\(|, )'(\w+)', /g)].map((m) => m[1]);
const paths = (schema: TObject, prefix = ''): string[] =>
  Object.keys(schema.properties).flatMap((k) => [`${prefix}${k}`, ...(k === 'company' ? paths(CompanySummary, 'company.') : [])]);

describe('the Contact shape', () => {
  it("the read path's JSON builder has exactly the schema's properties, in the schema's order", () => {
    const contact = Object.keys(ContactSchema.properties);
    const company = Object.keys(CompanySummary.properties);
    const at = contact.indexOf('company');
    expect(builtKeys(CONTACT_JSON_SQL)).toEqual([...contact.slice(0, at + 1), ...company, ...contact.slice(at + 1)]);
  });

  it('every built-in catalog field reads a property of the shape', () => {
    const shape = new Set(paths(ContactSchema));
    expect(BUILTIN_CONTACT_FIELDS.map((f) => f.output.join('.')).filter((p) => !shape.has(p))).toEqual([]);
  });
});
