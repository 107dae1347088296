/**
 * `GET /schema/contact/options` as one use case: the options of one contact field, from its
 * definition (pick lists, booleans) or else from the values the workspace's contacts hold.
 * Every database call goes through the request's `scope` (db/contactRead.ts).
 */
import type { Static } from '@sinclair/typebox';
import type { WorkspaceScope } from '../../db/scope.js';
import { fieldValueOptions, loadContactCatalog } from '../../db/contactRead.js';
import { invalidField } from '../../domain/errors.js';
import type { OptionsQuery } from '../schemas/schema.js';

export async function contactFieldOptions(scope: WorkspaceScope, query: Static<typeof OptionsQuery>) {
  const catalog = await loadContactCatalog(scope.db, scope.workspaceId);
  const field = catalog.get(query.field);
  // a well-formed custom field path the workspace does not have is a 404, as in conditions
  if (!field) throw catalog.unknown?.(query.field, '/field') ?? invalidField('/field', `unknown field ${query.field}; see GET /schema/contact`);
  const limit = query.limit ?? 100;
  const q = query.q?.toLowerCase();
  if (field.options) {
    const opts = field.options.filter((o) => !q || o.label.toLowerCase().includes(q) || String(o.value).toLowerCase().includes(q));
    return { data: opts.slice(0, limit), meta: { source: 'definition' as const } };
  }
  if (field.type === 'boolean')
    return { data: [{ label: 'true', value: true }, { label: 'false', value: false }], meta: { source: 'definition' as const } };
  const data = await fieldValueOptions(scope.db, { workspaceId: scope.workspaceId, catalog, field, search: q, limit });
  return { data, meta: { source: 'values' as const } };
}
