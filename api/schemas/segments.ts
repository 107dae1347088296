/** Segments: request and response shapes (API-SPEC "Segments", DESIGN §4). */
import { LIMITS } from '../../domain/conditions.js';
import { Type, type Static } from '@sinclair/typebox';
import { Condition, GroupedCondition, JsonValue, KeyedRecord, NonBlankString } from './common.js';
import { contactSchemas } from './conditions.js';

const JsonObject = KeyedRecord(JsonValue, { keyMaxLength: 200, maxProperties: 200 });

const Workflows = Type.Array(JsonObject, {
  maxItems: 100,
  description: 'Automation definitions attached to the segment (free-form JSON objects); always copied by clone',
});
const SavedViewTemplates = Type.Array(JsonObject, {
  maxItems: 100,
  description: 'Saved views of the segment (free-form JSON objects, e.g. `{name, fields, sort}`)',
});
const SegmentSources = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  maxItems: 500,
  uniqueItems: true,
  description: 'Ids of sources of the workspace; the segment holds the contacts that came from them and match its conditions',
});
const Conditions = Type.Array(Type.Ref(contactSchemas.Condition), { maxItems: LIMITS.maxLeaves, description: 'ANDed, same rules as `POST /contacts/filter-contacts`' });
const Grouped = Type.Union([Type.Ref(contactSchemas.GroupedCondition), Type.Null()]);

export const SegmentAttributes = Type.Object({
  name: Type.String(),
  clonedFrom: Type.Union([Type.String(), Type.Null()], { description: 'Id of the segment this one was cloned from' }),
  segmentSources: Type.Array(Type.String()),
  isDefault: Type.Boolean({ description: 'The default segment of a workspace holds every contact' }),
  conditions: Type.Array(Type.Ref(Condition)),
  groupedCondition: Type.Union([Type.Ref(GroupedCondition), Type.Null()]),
  workflows: Type.Array(JsonObject),
  savedViewTemplates: Type.Array(JsonObject),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

export const Segment = Type.Object(
  { id: Type.String({ format: 'uuid' }), type: Type.Literal('segments'), attributes: SegmentAttributes },
  { $id: 'Segment' },
);
export type SegmentJson = Static<typeof Segment>;

export const SegmentResponse = Type.Object({ data: Segment });
export const SegmentList = Type.Object({ data: Type.Array(Segment) });

export const CreateSegmentBody = Type.Object(
  {
    name: NonBlankString({ maxLength: 200 }),
    segmentSources: Type.Optional(SegmentSources),
    conditions: Type.Optional(Conditions),
    groupedCondition: Type.Optional(Grouped),
    workflows: Type.Optional(Workflows),
    savedViewTemplates: Type.Optional(SavedViewTemplates),
  },
  { additionalProperties: false },
);
export type CreateSegmentBody = Static<typeof CreateSegmentBody>;

export const PatchSegmentBody = Type.Object(
  {
    name: Type.Optional(NonBlankString({ maxLength: 200 })),
    segmentSources: Type.Optional(SegmentSources),
    conditions: Type.Optional(Conditions),
    groupedCondition: Type.Optional(Grouped),
    workflows: Type.Optional(Workflows),
    savedViewTemplates: Type.Optional(SavedViewTemplates),
  },
  {
    additionalProperties: false,
    description:
      'Only the properties present change (each replaces the stored value). The default segment holds every contact: its `segmentSources`, `conditions` and `groupedCondition` cannot be set (400).',
  },
);
export type PatchSegmentBody = Static<typeof PatchSegmentBody>;

export const SegmentSearchQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 200, description: 'Type-ahead text: segments whose name contains it (case-insensitive), names starting with it first' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 10 })),
  },
  { additionalProperties: false },
);

export const CloneSegmentBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Default: `Copy of {name} - {ISO timestamp}`' })),
    workflowOnly: Type.Optional(Type.Boolean({ description: 'true: copy only the workflows (no segmentSources, conditions or saved-view templates)', default: false })),
  },
  { additionalProperties: false },
);
export type CloneSegmentBody = Static<typeof CloneSegmentBody>;

export const SegmentDeleted = Type.Object({ data: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }) });
