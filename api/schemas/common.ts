/** Shapes shared by several endpoint groups. */
import { Type, type Static, type TSchema } from '@sinclair/typebox';

export const OPERATORS = ['==', '!=', 'LIKE', 'NOT LIKE', 'IN', 'NOT IN', 'ALL', 'IS EMPTY', 'IS NOT EMPTY', '>', '>=', '<', '<=', 'BETWEEN'] as const;
export const GROUP_OPERATORS = ['AND', 'OR', 'NOT'] as const;

const Scalar = Type.Union([Type.String(), Type.Number(), Type.Boolean()]);

export const Condition = Type.Object(
  {
    field: Type.String({ minLength: 1, description: 'A `writeAccessPath` from the matching schema endpoint' }),
    operator: Type.Union(OPERATORS.map((o) => Type.Literal(o)), { description: 'Valid operators depend on the field type' }),
    value: Type.Optional(Type.Union([Scalar, Type.Array(Scalar), Type.Null()])),
  },
  { additionalProperties: false, $id: 'Condition' },
);
export type Condition = Static<typeof Condition>;

export const GroupedCondition = Type.Recursive(
  (Self) =>
    Type.Object(
      {
        operator: Type.Union(GROUP_OPERATORS.map((o) => Type.Literal(o))),
        conditions: Type.Array(Type.Union([Type.Ref(Condition), Self])),
      },
      { additionalProperties: false },
    ),
  { $id: 'GroupedCondition' },
);
export type GroupedCondition = Static<typeof GroupedCondition>;

export const PaginationMeta = Type.Object(
  { totalRecords: Type.Integer(), previousToken: Type.String(), nextToken: Type.String() },
  { $id: 'PaginationMeta' },
);

export const PaginationToken = Type.String({ maxLength: 2048, description: 'Opaque token from `meta.nextToken` or `meta.previousToken`' });

export const WebhookConfiguration = Type.Object(
  {
    url: Type.String({ format: 'uri', maxLength: 2048, description: 'Public http(s) URL notified when the job ends' }),
    headers: Type.Optional(Type.Record(Type.String({ pattern: '^[A-Za-z0-9-]{1,100}$' }), Type.String({ maxLength: 4096 }))),
  },
  { additionalProperties: false, $id: 'WebhookConfiguration' },
);

export const JobAccepted = Type.Object(
  {
    message: Type.String(),
    jobId: Type.String(),
    jobStatusEndpoint: Type.String({ format: 'uri' }),
  },
  { $id: 'JobAccepted' },
);

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      status: Type.Integer(),
      code: Type.String(),
      message: Type.String(),
      details: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
      requestId: Type.String(),
    }),
  },
  { $id: 'Error' },
);

/** `{ data: T }` */
export const DataOf = <T extends TSchema>(t: T) => Type.Object({ data: t });
/** `{ data: T[], meta }` */
export const PageOf = <T extends TSchema>(t: T) => Type.Object({ data: Type.Array(t), meta: Type.Ref(PaginationMeta) });

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });

/** Schemas referenced by `$ref` from route schemas; registered with ajv and published in OpenAPI components. */
export const sharedSchemas: TSchema[] = [Condition, GroupedCondition, PaginationMeta, WebhookConfiguration, JobAccepted, ErrorEnvelope];
