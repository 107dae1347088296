/**
 * Contact schema (API-SPEC "Schema", DESIGN §4): the workspace's contact field catalog
 * (built-in paths + custom fields), custom field creation and the options of one field.
 */
import { v7 as uuidv7 } from 'uuid';
import { loadContactCatalog, uniqueValues } from '../../db/contactRead.js';
import { insertCustomField } from '../../db/customFields.js';
import { GROUP_OPERATORS, OPERATORS_BY_TYPE } from '../../domain/conditions.js';
import { customField, schemaItem } from '../../domain/contactCatalog.js';
import { invalidField } from '../../domain/errors.js';
import { conflict } from '../errors.js';
import { defineRoute } from '../route.js';
import { ContactSchemaResponse, CreateCustomFieldBody, CustomFieldResponse, OptionsQuery, OptionsResponse } from '../schemas/schema.js';
import { likeContains } from '../../domain/like.js';

export const contactSchemaRoutes = [
  defineRoute({
    method: 'get',
    path: '/schema/contact',
    tag: 'Schema',
    summary: 'Contact field catalog of the workspace',
    description: 'Built-in `contact.*` and `company.*` paths and the custom fields `contact.customFields.<id>`; `meta.operators` lists the operators per type.',
    responses: { 200: ContactSchemaResponse },
    errors: [401, 500],
    handler: async ({ auth, deps }) => {
      const catalog = await loadContactCatalog(deps.pool, auth.workspaceId);
      return {
        data: catalog.fields.map(schemaItem),
        meta: { operators: OPERATORS_BY_TYPE as unknown as Record<string, string[]>, groupOperators: [...GROUP_OPERATORS] },
      };
    },
  }),

  defineRoute({
    method: 'post',
    path: '/schema/contact/custom-fields',
    tag: 'Schema',
    summary: 'Create a custom contact field',
    description: 'Returns the new schema item; its `writeAccessPath` is `contact.customFields.<id>`. Labels are unique per workspace (409).',
    body: CreateCustomFieldBody,
    responses: { 200: CustomFieldResponse },
    errors: [400, 401, 409, 500],
    idempotent: true,
    handler: async ({ body, auth, em }) => {
      // The schema holds which types take options and of what type (CreateCustomFieldBody).
      const options = 'options' in body ? body.options : undefined;
      const id = uuidv7();
      if (!(await insertCustomField(em, { id, workspaceId: auth.workspaceId, label: body.label.trim(), type: body.type, options }))) {
        throw conflict(`A custom field labelled "${body.label.trim()}" already exists`);
      }
      return { data: schemaItem(customField({ id, label: body.label.trim(), type: body.type, options: options ?? null })) };
    },
  }),

  defineRoute({
    method: 'get',
    path: '/schema/contact/options',
    tag: 'Schema',
    summary: 'Options of a contact field',
    description:
      'The allowed values of a field with a pick list (`meta.source: definition`); otherwise the values present on the workspace\'s contacts, ' +
      'most frequent first (`meta.source: values`). `q` keeps values containing it.',
    query: OptionsQuery,
    responses: { 200: OptionsResponse },
    errors: [400, 401, 500],
    handler: async ({ query, auth, deps }) => {
      const catalog = await loadContactCatalog(deps.pool, auth.workspaceId);
      const field = catalog.get(query.field);
      if (!field) throw invalidField('/field', `unknown field ${query.field}; see GET /schema/contact`);
      const limit = query.limit ?? 100;
      const q = query.q?.toLowerCase();
      if (field.options) {
        const opts = field.options.filter((o) => !q || o.label.toLowerCase().includes(q) || String(o.value).toLowerCase().includes(q));
        return { data: opts.slice(0, limit), meta: { source: 'definition' as const } };
      }
      if (field.type === 'boolean')
        return { data: [{ label: 'true', value: true }, { label: 'false', value: false }], meta: { source: 'definition' as const } };
      const like = q ? likeContains(q) : undefined;
      const values = await uniqueValues(
        deps.pool,
        {
          groupByField: field.path,
          conditions: like && field.type !== 'multi' && field.type === 'string' ? [{ field: field.path, operator: 'LIKE', value: like }] : undefined,
          limit,
        },
        { workspaceId: auth.workspaceId, catalog },
      );
      const data = values
        .filter((v) => v.value !== '' && (!q || String(v.value).toLowerCase().includes(q)))
        .map((v) => ({ label: String(v.value), value: v.value }));
      return { data, meta: { source: 'values' as const } };
    },
  }),
];
