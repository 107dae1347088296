/**
 * Contact schema (API-SPEC "Schema", DESIGN §4): the workspace's contact field catalog
 * (built-in paths + custom fields), custom field creation and the options of one field.
 */
import { v7 as uuidv7 } from 'uuid';
import { loadContactCatalog } from '../../db/contactRead.js';
import { insertCustomField } from '../../db/customFields.js';
import { GROUP_OPERATORS, OPERATORS_BY_TYPE } from '../../domain/conditions.js';
import { customField, schemaItem } from '../../domain/contactCatalog.js';
import { conflict } from '../errors.js';
import { defineRoute } from '../route.js';
import { ContactSchemaResponse, CreateCustomFieldBody, CustomFieldResponse, OptionsQuery, OptionsResponse } from '../schemas/schema.js';
import { contactFieldOptions } from '../usecases/contactFieldOptions.js';

export const contactSchemaRoutes = [
  defineRoute({
    method: 'get',
    path: '/schema/contact',
    tag: 'Schema',
    summary: 'Contact field catalog of the workspace',
    description: 'Built-in `contact.*` and `company.*` paths and the custom fields `contact.customFields.<id>`; `meta.operators` lists the operators per type.',
    responses: { 200: ContactSchemaResponse },
    errors: [401, 500],
    handler: async ({ scope }) => {
      const catalog = await loadContactCatalog(scope.db, scope.workspaceId);
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
    handler: async ({ body, scope }) => {
      // The schema holds which types take options and of what type (CreateCustomFieldBody).
      const options = 'options' in body ? body.options : undefined;
      const id = uuidv7();
      if (!(await insertCustomField(scope, { id, label: body.label.trim(), type: body.type, options }))) {
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
      'most frequent first (`meta.source: values`). `q` keeps values containing it. A custom field id the workspace does not have is a 404.',
    query: OptionsQuery,
    responses: { 200: OptionsResponse },
    errors: [400, 401, 404, 500],
    handler: async ({ query, scope }) => contactFieldOptions(scope, query),
  }),
];
