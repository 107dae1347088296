/** Shapes of the contact-side Schema endpoints (`/schema/contact…`). */
import { Type, type TSchema } from '@sinclair/typebox';
import { MAX_NUMERIC, OPERATORS_BY_TYPE } from '../../domain/conditions.js';
import { NonBlankString } from './common.js';
import { contactSchemas } from './conditions.js';

const FieldType = Type.Union(Object.keys(OPERATORS_BY_TYPE).map((t) => Type.Literal(t)));
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

const optionsOf = <T extends TSchema>(value: T) =>
  Type.Optional(
    Type.Array(Type.Object({ label: NonBlankString({ maxLength: 200 }), value }, { additionalProperties: false }), {
      maxItems: 500,
      description: 'Allowed values; values are checked on write',
    }),
  );
const CustomFieldLabel = NonBlankString({ maxLength: 200 });
const StringOptions = optionsOf(Type.String({ maxLength: 500 }));
const NumberOptions = optionsOf(Type.Number({ minimum: -MAX_NUMERIC, maximum: MAX_NUMERIC }));

/**
 * One branch per kind of `type`, in the order of CUSTOM_FIELD_TYPES so the "must be one of" line
 * lists them so (api/validation.ts reports only the branch `type` selects): string and multi
 * fields take string options, number fields number options, date and boolean fields none.
 */
export const CreateCustomFieldBody = Type.Union(
  [
    Type.Object({ label: CustomFieldLabel, type: Type.Literal('string'), options: StringOptions }, { additionalProperties: false }),
    Type.Object({ label: CustomFieldLabel, type: Type.Literal('number'), options: NumberOptions }, { additionalProperties: false }),
    Type.Object({ label: CustomFieldLabel, type: Type.Union([Type.Literal('date'), Type.Literal('boolean')]) }, { additionalProperties: false }),
    Type.Object({ label: CustomFieldLabel, type: Type.Literal('multi'), options: StringOptions }, { additionalProperties: false }),
  ],
  { description: 'A custom field; `options` (a pick list) only for `string`, `number` and `multi` fields, with values of the field\'s type' },
);
export const CustomFieldResponse = Type.Object({ data: ContactSchemaItem });

export const OptionsQuery = Type.Object(
  {
    field: Type.Unsafe<string>({ ...contactSchemas.FieldPath, description: 'A `writeAccessPath` of `GET /schema/contact`' }),
    q: Type.Optional(Type.String({ maxLength: 200, description: 'Keep values containing this text (case-insensitive)' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
  },
  { additionalProperties: false },
);

export const OptionsResponse = Type.Object({ data: Type.Array(Option), meta: Type.Object({ source: Type.Union([Type.Literal('definition'), Type.Literal('values')]) }) });
