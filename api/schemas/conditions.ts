/**
 * Condition, group, sort and field-list schemas of one FIXED field catalog (domain/conditions.ts):
 * the rules `parseWhere` applies per field type said in JSON Schema, so what the document calls
 * valid the server accepts (issue 27 item 21). A leaf is one branch per field type and operator
 * kind, told apart by the literals `field` (an enum of the catalog's paths of that type) and
 * `operator` (api/validation.ts reports only the branches those match).
 *
 * A tree is bounded only as the schema states (domain/conditions.ts `TreeLimits`): each list's
 * `maxItems` and, for discovery, a depth. What JSON Schema cannot carry stays with the server:
 * for the contact catalog, the type of a workspace's custom field (`contact.customFields.<id>`:
 * one branch takes any operator; an id the workspace does not have is a 404).
 *
 * No import of ./common.js (which lists these among the shared schemas).
 */
import { Type, type TSchema, type TUnsafe } from '@sinclair/typebox';
import { GROUP_OPERATORS, LIMITS, MAX_NUMERIC, OPERATORS_BY_TYPE, maxConditionsOf, type CatalogField, type Condition, type FieldType, type GroupedCondition, type TreeLimits } from '../../domain/conditions.js';
import { BUILTIN_CONTACT_FIELDS, CUSTOM_FIELD_PATH_PATTERN } from '../../domain/contactCatalog.js';
import { DATE_RANGE_RULE } from '../../domain/dates.js';
import { PERSON_PREFIX, companySearchCatalog, contactSearchCatalog } from '../../domain/discoveryCatalog.js';
import { postCatalog } from '../../domain/postCatalog.js';
import { SOURCE_CATALOG } from '../../db/sources.js';

/**
 * A property that, when sent, may only be null (an operator that takes no value, a source type
 * with no identifier). Written `const: null` rather than `type: 'null'`: the same values, but
 * openapi-generator's typescript-fetch turns a bare `type: 'null'` property into an import of a
 * `Null` model it never generates, and the client does not compile (generatedClients.test).
 */
export const NullOnly = (description: string) => Type.Unsafe<null>({ const: null, description });

const ALL_OPERATORS = ['==', '!=', 'LIKE', 'NOT LIKE', 'IN', 'NOT IN', 'ALL', 'IS EMPTY', 'IS NOT EMPTY', '>', '>=', '<', '<=', 'BETWEEN'] as const;

const oneOfStrings = (values: readonly string[], description?: string) =>
  Type.Unsafe<string>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });

const TIME = 'T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,6})?)?';
/** Month and day on the calendar, but 29 February. */
const MONTH_DAY = '((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8]))';
/** Leap years (every 4th, of centuries every 4th), 0004 to 9996. */
const LEAP_YEAR = '([0-9]{2}(0[48]|[2468][048]|[13579][26])|(0[48]|[2468][048]|[13579][26])00)';
const INNER_YEAR = '(000[2-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-8][0-9]{3}|9[0-8][0-9]{2}|99[0-8][0-9]|999[0-8])';
/**
 * ISO 8601 date or date-time on the calendar, as `parseIsoDate` reads it ({@link DATE_RANGE_RULE}):
 * years 0002 to 9998 with any zone offset up to ±13:59; in 0001 and 9999 (neither a leap year)
 * an offset could move the instant out of range, so there a time is UTC (`Z`).
 */
export const ISO_DATE_PATTERN =
  `^((${INNER_YEAR}-${MONTH_DAY}|${LEAP_YEAR}-02-29)(${TIME}(Z|[+-](0[0-9]|1[0-3]):[0-5][0-9])?)?` +
  `|(0001|9999)-${MONTH_DAY}(${TIME}Z)?)$`;
/** What a date value is, for error messages (ajv would quote ISO_DATE_PATTERN). */
export const ISO_DATE_RULE = `must be an ISO 8601 date or date-time (YYYY-MM-DD, or with THH:MM[:SS[.ffffff]] and Z or ±HH:MM) of a real calendar day ${DATE_RANGE_RULE}`;
/** A number in decimal notation below MAX_NUMERIC (1e15) in magnitude, as `numberInput` reads it. */
const DECIMAL_PATTERN = '^[+-]?([0-9]{1,15}(\\.[0-9]{0,15})?|\\.[0-9]{1,15})$';
/** A UUID, as `isUuid` reads it (ajv's `uuid` format would also take a `urn:uuid:` prefix). */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
/** A LIKE pattern PostgreSQL takes: no NUL, and no unpaired `\` at the end (domain/like.ts). */
export const LIKE_PATTERN = '^([^\\u0000\\\\]|\\\\[^\\u0000])*$';

const Num = () => Type.Number({ minimum: -MAX_NUMERIC, maximum: MAX_NUMERIC });
const SCALARS: Record<Exclude<FieldType, 'multi'>, () => TSchema> = {
  string: () => Type.Union([Type.String({ maxLength: LIMITS.maxStringLength }), Num()]),
  number: () => Type.Union([Num(), Type.String({ pattern: DECIMAL_PATTERN, description: 'A number in decimal notation' })]),
  date: () => Type.String({ maxLength: 40, pattern: ISO_DATE_PATTERN, description: 'ISO 8601 date or date-time' }),
  boolean: () => Type.Union([Type.Boolean(), oneOfStrings(['true', 'false'])]),
  uuid: () => Type.String({ pattern: UUID_PATTERN, description: 'An id (UUID)' }),
};

const leaf = (fields: string[], operators: readonly string[], value: TSchema | null, description: string) =>
  Type.Object(
    {
      field: oneOfStrings(fields),
      operator: oneOfStrings(operators),
      value: value ? value : Type.Optional(NullOnly('Omitted (or null): these operators take no value')),
    },
    { additionalProperties: false, description },
  );

/** The leaf branches of the fields of one type. */
function leavesOf(type: FieldType, fields: string[]): TSchema[] {
  const ops = OPERATORS_BY_TYPE[type];
  const pick = (wanted: readonly string[]) => wanted.filter((o) => ops.includes(o));
  const out: TSchema[] = [];
  const add = (wanted: readonly string[], value: TSchema | null, description: string) => {
    const o = pick(wanted);
    if (o.length) out.push(leaf(fields, o, value, `${type} fields: ${description}`));
  };
  if (type === 'multi') {
    const values = Type.Union([Type.String(), Type.Array(Type.Union([Type.String(), Num()]), { minItems: 1, maxItems: LIMITS.maxListItems })]);
    add(['IN', 'ALL', 'NOT IN'], values, '`IN` shares any of the values, `ALL` holds every one, `NOT IN` shares none');
  } else {
    const scalar = SCALARS[type]();
    add(['==', '!=', '>', '>=', '<', '<='], scalar, 'one value');
    add(['BETWEEN'], Type.Array(SCALARS[type](), { minItems: 2, maxItems: 2, description: '[min, max], inclusive' }), '[min, max]');
    add(['IN', 'NOT IN'], Type.Array(SCALARS[type](), { minItems: 1, maxItems: LIMITS.maxListItems }), 'a list of values');
    add(['LIKE', 'NOT LIKE'], Type.Union([Type.String({ maxLength: LIMITS.maxStringLength, pattern: LIKE_PATTERN }), Num()]), 'a pattern (`%` any run, `_` one character, `\\` escapes)');
  }
  add(['IS EMPTY', 'IS NOT EMPTY'], null, 'no value');
  return out;
}

export interface CatalogSchemas {
  Condition: TUnsafe<Condition>;
  GroupedCondition: TUnsafe<GroupedCondition>;
  /** A `fields` item: any path of the catalog. */
  FieldPath: TUnsafe<string>;
  /** A sort key: `{field, direction}` over the sortable paths. */
  SortEntry: TUnsafe<{ field: string; direction?: 'asc' | 'desc' }>;
}

/**
 * The schemas of a fixed catalog, `$id`s `<name>Condition` and `<name>GroupedCondition` (listed
 * in common.ts `sharedSchemas`, so the document names them once). `extraLeaves`: branches for
 * paths outside the fixed list (the contact catalog's custom fields).
 */
export function catalogSchemas(
  name: string,
  fields: readonly Pick<CatalogField, 'path' | 'type' | 'filteringSupported' | 'sortable'>[],
  extra: { leaves?: TSchema[]; paths?: TSchema[]; description?: string; selectable?: (path: string) => boolean; notSelectable?: string; treeLimits?: TreeLimits } = {},
): CatalogSchemas {
  const byType = new Map<FieldType, string[]>();
  for (const f of fields) if (f.filteringSupported) byType.get(f.type)?.push(f.path) ?? byType.set(f.type, [f.path]);
  const branches = [...byType].flatMap(([type, paths]) => leavesOf(type, paths)).concat(extra.leaves ?? []);
  // a sampled example (clients, the document's own examples) takes this rather than guess a branch
  const first = fields.find((f) => f.filteringSupported)!;
  const example = { field: first.path, operator: 'IS NOT EMPTY' };
  const Condition = Type.Unsafe<Condition>(Type.Union(branches, {
    $id: `${name}Condition`,
    examples: [example],
    description: extra.description ?? 'A condition on one field; the operators and the value depend on the field\'s type',
  }));
  const groupDoc = '`AND`, `OR` or `NOT` (NOT of several: NOT(c1 AND c2 …)) of conditions and groups; ';
  const group = (conditions: TSchema, options: object = {}) =>
    Type.Object({ operator: oneOfStrings(GROUP_OPERATORS), conditions }, { additionalProperties: false, ...options });
  const groupOptions = { $id: `${name}GroupedCondition`, examples: [{ operator: 'AND', conditions: [example] }] };
  const limits = extra.treeLimits;
  const GroupedCondition = Type.Unsafe<GroupedCondition>(
    limits
      ? levelledGroup(Condition, limits.groupItems, group, {
          ...groupOptions,
          description:
            groupDoc +
            `at most ${limits.groupItems.join(', ')} items in the \`conditions\` of a group at depth 1 (this one), 2 … ` +
            `and no group deeper than ${limits.groupItems.length}; with the root \`conditions\` (at most ${LIMITS.maxLeaves}), ` +
            `a query holds at most ${maxConditionsOf(limits.groupItems)} conditions`,
        })
      : Type.Recursive((Self) => group(Type.Array(Type.Union([Type.Ref(Condition), Self]), { minItems: 1, maxItems: LIMITS.maxLeaves })), {
          ...groupOptions,
          description: groupDoc + `at most ${LIMITS.maxLeaves} items in each \`conditions\` list`,
        }),
  );
  const all = fields.map((f) => f.path).filter(extra.selectable ?? (() => true));
  // `x-refusal`: said after "must be one of" when a path is refused (api/validation.ts toDetails)
  const selectablePaths = extra.notSelectable ? { ...oneOfStrings(all, extra.notSelectable), 'x-refusal': extra.notSelectable } : oneOfStrings(all);
  const FieldPath = Type.Unsafe<string>(extra.paths?.length ? Type.Union([selectablePaths, ...extra.paths]) : selectablePaths);
  const sortable = fields.filter((f) => f.type !== 'multi' && f.sortable !== false).map((f) => f.path);
  const SortEntry = Type.Unsafe<{ field: string; direction?: 'asc' | 'desc' }>(Type.Object(
    {
      field: extra.paths?.length ? Type.Union([oneOfStrings(sortable), ...extra.paths]) : oneOfStrings(sortable),
      direction: Type.Optional(oneOfStrings(['asc', 'desc'])),
    },
    { additionalProperties: false },
  ));
  return { Condition, GroupedCondition, FieldPath, SortEntry };
}

/**
 * A group whose depth the schema itself bounds (domain/conditions.ts TreeLimits `{groupItems}`):
 * not recursive but one object per depth, the `conditions` of depth d holding at most
 * `groupItems[d - 1]` conditions or groups of depth d + 1, the last depth conditions only.
 */
function levelledGroup(
  Condition: TSchema,
  groupItems: readonly number[],
  group: (conditions: TSchema, options?: object) => TSchema,
  options: object,
): TSchema {
  let inner: TSchema | undefined;
  for (let d = groupItems.length; d >= 1; d--) {
    const item = inner ? Type.Union([Type.Ref(Condition), inner]) : Type.Ref(Condition);
    const conditions = Type.Array(item, { minItems: 1, maxItems: groupItems[d - 1]!, description: `Conditions${inner ? ' and groups' : ''} of a group at depth ${d}` });
    inner = group(conditions, d === 1 ? options : {});
  }
  return inner!;
}

/** A leaf on paths matched by `pattern` whose type the server knows (any operator; the value is checked by it). */
export const openLeaf = (pattern: string, description: string) =>
  Type.Object(
    {
      field: Type.String({ pattern, description }),
      operator: oneOfStrings(ALL_OPERATORS),
      value: Type.Optional(
        Type.Union([
          Type.String({ maxLength: LIMITS.maxStringLength }),
          Num(),
          Type.Boolean(),
          Type.Array(Type.Union([Type.String({ maxLength: LIMITS.maxStringLength }), Num(), Type.Boolean()]), { maxItems: LIMITS.maxListItems }),
          Type.Null(),
        ]),
      ),
    },
    { additionalProperties: false, description },
  );

// ---------------------------------------------------------------------------------------------
// the catalogs

const CUSTOM_FIELD_RULE =
  'A custom field of the workspace (`contact.customFields.<id>`, listed by GET /schema/contact): its type, and so its operators and values, ' +
  'is the workspace\'s, which this document cannot state (the server checks them: 400); an id the workspace does not have is a 404';
/** Conditions, fields and sort of the contact catalog: the built-in paths, and custom field paths. */
export const contactSchemas = {
  ...catalogSchemas('Contact', BUILTIN_CONTACT_FIELDS, {
    leaves: [openLeaf(CUSTOM_FIELD_PATH_PATTERN, CUSTOM_FIELD_RULE)],
    paths: [Type.String({ pattern: CUSTOM_FIELD_PATH_PATTERN, description: CUSTOM_FIELD_RULE })],
    description: 'A condition on one contact field: a built-in path (operators and value by its type) or a custom field of the workspace',
  }),
  /** A path a value can be written to (a field mapping's target): the writable built-ins, or a custom field of the workspace. */
  WritablePath: Type.Unsafe<string>(Type.Union([
    oneOfStrings(BUILTIN_CONTACT_FIELDS.filter((f) => f.write).map((f) => f.path)),
    Type.String({ pattern: CUSTOM_FIELD_PATH_PATTERN, description: CUSTOM_FIELD_RULE }),
  ], { description: 'A writable path of `GET /schema/contact`' })),
};
export const discoveryContactSchemas = catalogSchemas('DiscoveryContact', contactSearchCatalog.fields, { treeLimits: contactSearchCatalog.treeLimits });
// person attributes filter a company search; its items are company records (issue 27 item 13)
export const discoveryCompanySchemas = catalogSchemas('DiscoveryCompany', companySearchCatalog.fields, {
  treeLimits: companySearchCatalog.treeLimits,
  selectable: (p) => !p.startsWith(PERSON_PREFIX),
  notSelectable: `${PERSON_PREFIX}* paths filter companies only; people (charged per person) come from find-contacts-v2`,
});
export const postSchemas = catalogSchemas('Post', postCatalog.fields);
export const sourceSchemas = catalogSchemas('Source', SOURCE_CATALOG.fields);

/** Registered with ajv and published as components (common.ts `sharedSchemas`). */
export const catalogSharedSchemas: TSchema[] = [contactSchemas, discoveryContactSchemas, discoveryCompanySchemas, postSchemas, sourceSchemas].flatMap((s) => [s.Condition, s.GroupedCondition]);
