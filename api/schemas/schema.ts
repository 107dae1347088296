/** Shapes of the contact-side Schema endpoints (`/schema/contact…`). */
import { Type } from '@sinclair/typebox';
import { CUSTOM_FIELD_TYPES } from '../../domain/contactCatalog.js';
import { MAX_NUMERIC, OPERATORS_BY_TYPE } from '../../domain/conditions.js';
import { NonBlankString } from './common.js';

const FieldType = Type.Union(Object.keys(OPERATORS_BY_TYPE).map((t) => Type.Literal(t)));
const CustomFieldType = Type.Union(CUSTOM_FIELD_TYPES.map((t) => Type.Literal(t)));
const Option = Type.Object({ label: Type.String(), value: Type.Unknown() });

export const ContactSchemaItem = Type.Object({
  writeAccessPath: Type.String({ description: 'Used in `fields`, conditions, sort, `groupByField` and field mappings' }),
  readAccessPath: Type.String({ description: 'Where the value sits in a contact item (`company.companyName`, `customFields.<id>`)' }),
  type: FieldType,
  label: Type.String(),
  filteringSupported: Type.Boolean(),
  writable: Type.Boolean(),
  custom: Type.Boolean(),
  options: Type.Optional(Type.Array(Option)),
});

export const ContactSchemaResponse = Type.Object({
  data: Type.Array(ContactSchemaItem),
  meta: Type.Object({ operators: Type.Record(Type.String(), Type.Array(Type.String())), groupOperators: Type.Array(Type.String()) }),
});

export const CreateCustomFieldBody = Type.Object(
  {
    label: NonBlankString({ maxLength: 200 }),
    type: CustomFieldType,
    options: Type.Optional(
      Type.Array(
        Type.Object({ label: NonBlankString({ maxLength: 200 }), value: Type.Union([Type.String({ maxLength: 500 }), Type.Number({ minimum: -MAX_NUMERIC, maximum: MAX_NUMERIC })]) }, { additionalProperties: false }),
        { maxItems: 500, description: 'Allowed values (string, number and multi fields); values are checked on write' },
      ),
    ),
  },
  { additionalProperties: false },
);

export const CustomFieldResponse = Type.Object({ data: ContactSchemaItem });

export const OptionsQuery = Type.Object(
  {
    field: Type.String({ minLength: 1, maxLength: 300, description: 'A `writeAccessPath` of `GET /schema/contact`' }),
    q: Type.Optional(Type.String({ maxLength: 200, description: 'Keep values containing this text (case-insensitive)' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  },
  { additionalProperties: false },
);

export const OptionsResponse = Type.Object({ data: Type.Array(Option), meta: Type.Object({ source: Type.Union([Type.Literal('definition'), Type.Literal('values')]) }) });
