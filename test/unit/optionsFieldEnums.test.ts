/**
 * The `field` query parameter of the discovery option and suggestion endpoints is an enum in the
 * published schema (issue 27 item 21: what the document calls valid, the server accepts). The enum
 * must be exactly the set of fields the catalogs link to, so a schema-valid field never gets the
 * handler's 400 ("unknown field", "no option list") and a linked field is never refused.
 */
import { describe, expect, it } from 'vitest';
import { v2OptionsQuery, verifiedBody, verifiedOptionsQuery, verifiedSuggestionsQuery } from '../../api/schemas/discovery.js';
import { v2SchemaItems, verifiedSchemaItems } from '../../domain/discoverySchemaItems.js';

const fieldOfLink = (link: string) => new URL(link, 'http://x').searchParams.get('field')!;
const enumOf = (schema: { properties: { field: unknown } }) => [...((schema.properties.field as { enum: string[] }).enum)].sort();

describe('options field enums', () => {
  for (const entity of ['contact', 'company'] as const) {
    it(`v2 ${entity}: enum = fields with an optionsLink`, () => {
      const linked = v2SchemaItems(entity).filter((i) => i.optionsLink).map((i) => fieldOfLink(i.optionsLink!));
      expect(linked.length).toBeGreaterThan(0);
      expect(enumOf(v2OptionsQuery(entity))).toEqual([...new Set(linked)].sort());
      expect(enumOf(v2OptionsQuery(entity))).not.toContain('dsContact.member_full_name');
    });
    it(`verified ${entity}: options enum = optionsLinks, suggestions enum = suggestionLinks`, () => {
      const items = verifiedSchemaItems(entity, () => ({ options: [], hasMore: false }));
      const all = items.flatMap((i) => [i, ...i.childFields]);
      const options = all.filter((i) => i.optionsLink).map((i) => fieldOfLink(i.optionsLink));
      const suggestions = all.filter((i) => i.suggestionLink).map((i) => fieldOfLink(i.suggestionLink));
      expect(options.length).toBeGreaterThan(0);
      expect(enumOf(verifiedOptionsQuery(entity))).toEqual([...new Set(options)].sort());
      expect(enumOf(verifiedSuggestionsQuery(entity))).toEqual([...new Set(suggestions)].sort());
    });
  }

  for (const entity of ['contact', 'company'] as const) {
    it(`verified ${entity} search: inputFieldMapping sourceFieldName enum = the catalog's names`, () => {
      // one branch per input (its userInput schema), told apart by the sourceFieldName literal
      const entry = (verifiedBody(entity).properties.inputFieldMapping as unknown as { items: { anyOf: { properties: { sourceFieldName: { const: string } } }[] } }).items;
      const names = verifiedSchemaItems(entity, () => ({ options: [], hasMore: false })).map((i) => i.name);
      expect(entry.anyOf.map((b) => b.properties.sourceFieldName.const).sort()).toEqual([...names].sort());
    });
  }
});
