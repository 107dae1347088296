/**
 * The API shape of an entity is its TypeBox schema: the response carries exactly the schema's
 * properties, in the schema's order, read from the entity of the same property names (dates as
 * ISO 8601). No per-resource mapper repeats the list.
 */
import type { Static, TObject } from '@sinclair/typebox';

const keysOf = new WeakMap<TObject, string[]>();

export function entityJson<S extends TObject>(schema: S, entity: object): Static<S> {
  let keys = keysOf.get(schema);
  if (!keys) keysOf.set(schema, (keys = Object.keys(schema.properties)));
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const v = (entity as Record<string, unknown>)[key];
    out[key] = v instanceof Date ? v.toISOString() : v;
  }
  return out as Static<S>;
}
