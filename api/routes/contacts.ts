/**
 * Contacts (API-SPEC "Contacts", DESIGN §3-4): read, bulk fetch, filter, list by segment, unique
 * values, partial update, soft delete, single upsert into a source and asynchronous bulk upsert.
 *
 * Static paths come before `{param}` paths; `/contacts/unified-data-api` (enrichment) is
 * mounted by an earlier group.
 */
import { v7 as uuidv7 } from 'uuid';
import { assertOutboundUrl } from '../../activities/outbound.js';
import { ingestContacts } from '../../db/contactIngest.js';
import { fetchContacts, listContacts, loadContactCatalog, uniqueValues } from '../../db/contactRead.js';
import { stageRows } from '../../db/contactStaging.js';
import { deleteContact, patchContact } from '../../db/contactWrite.js';
import type { Queryable } from '../../db/pool.js';
import { findInWorkspace } from '../../db/scoping.js';
import { assertSegment, attachSourceToSegment } from '../../db/segmentLinks.js';
import { ensureDefaultSegment } from '../../db/segments.js';
import { segmentMembershipWhere } from '../../domain/segmentMembership.js';
import { badRequest, notFound, type ErrorDetail } from '../../domain/errors.js';
import { checkFieldMapping, mapRow, planFor, rowKeys, type FieldMappingEntry } from '../../domain/contactMapping.js';
import { defineRoute, reply } from '../route.js';
import { startJob } from '../jobs.js';
import {
  BulkFetchBody,
  BulkUpsertBody,
  BySegmentBody,
  ContactDeleted,
  ContactIdParams,
  ContactList,
  ContactPage,
  ContactResponse,
  FilterContactsBody,
  JobAccepted,
  PatchContactBody,
  SegmentIdParams,
  SourceIdParams,
  UniqueValuesBody,
  UniqueValuesResponse,
  UpsertContactBody,
} from '../schemas/contacts.js';

interface SourceRow extends Record<string, unknown> {
  id: string;
  source_meta: { config?: { fieldMapping?: FieldMappingEntry[] } } | null;
}

function loadSource(q: Queryable, workspaceId: string, id: string): Promise<SourceRow> {
  return findInWorkspace<SourceRow>(q, 'Source', `select id, source_meta from sources where id = $1 and workspace_id = $2`, workspaceId, id);
}

async function oneContact(q: Queryable, workspaceId: string, id: string) {
  const [c] = await fetchContacts(q, workspaceId, [id]);
  if (!c) throw notFound('Contact', id);
  return c;
}

const validationFailed = (details: ErrorDetail[]) =>
  badRequest('validation_failed', details.map((d) => `${d.path}: ${d.message}`).slice(0, 5).join('; '), details.slice(0, 100));

export const contactRoutes = [
  defineRoute({
    method: 'post',
    path: '/contacts/bulk-fetch',
    tag: 'Contacts',
    summary: 'Fetch up to 100 contacts by id',
    description: 'Contacts in the order of `contactIds`; unknown, deleted and other workspaces\' ids are simply absent.',
    body: BulkFetchBody,
    responses: { 200: ContactList },
    errors: [400, 401, 500],
    handler: async ({ body, auth, deps }) => ({ data: await fetchContacts(deps.pool, auth.workspaceId, body.contactIds) }),
  }),

  defineRoute({
    method: 'post',
    path: '/contacts/filter-contacts',
    tag: 'Contacts',
    summary: 'Filter contacts with conditions',
    description:
      'Root `conditions` are AND-ed with `groupedCondition` (`AND`/`OR`/`NOT`, nestable). Operators by field type — string: ' +
      '`==` `!=` `LIKE` `NOT LIKE` (`%`/`_` wildcards, case-insensitive) `IN` `NOT IN` `IS EMPTY` `IS NOT EMPTY`; number/date: `==` `!=` ' +
      '`>` `>=` `<` `<=` `BETWEEN` [min,max] `IN` `IS EMPTY` `IS NOT EMPTY`; multi-value: `IN` (any) `ALL` `NOT IN` `IS EMPTY` `IS NOT EMPTY`. ' +
      'A missing value matches no positive operator and every negative one. With `fields`, each item carries `id` plus those paths ' +
      'nested as in the Contact shape; without, full contacts. Pages are keyset-based (`limit` ≤ 1000, default 100).',
    body: FilterContactsBody,
    responses: { 200: ContactPage },
    errors: [400, 401, 500],
    handler: async ({ body, auth, deps }) => {
      const catalog = await loadContactCatalog(deps.pool, auth.workspaceId);
      return listContacts(deps.pool, body, { workspaceId: auth.workspaceId, catalog, secret: deps.config.serverSecret });
    },
  }),

  defineRoute({
    method: 'post',
    path: '/contacts/by-segment/{segmentId}',
    tag: 'Contacts',
    summary: 'List the contacts of a segment',
    description:
      "Members of the segment (contacts from its sources that match its conditions; the default segment holds every contact), " +
      'further filtered by the body\'s `conditions` / `groupedCondition` (same rules as filter-contacts).',
    params: SegmentIdParams,
    body: BySegmentBody,
    responses: { 200: ContactPage },
    errors: [400, 401, 404, 500],
    handler: async ({ params, body, auth, deps, em }) => {
      await ensureDefaultSegment(em, auth.workspaceId);
      const seg = await findInWorkspace<{ id: string; is_default: boolean; segment_sources: string[]; conditions: unknown[]; grouped_condition: unknown }>(
        deps.pool,
        'Segment',
        `select id, is_default, segment_sources::text[] as segment_sources, conditions, grouped_condition from segments where id = $1 and workspace_id = $2`,
        auth.workspaceId,
        params.segmentId,
      );
      const catalog = await loadContactCatalog(deps.pool, auth.workspaceId);
      return listContacts(deps.pool, body, {
        workspaceId: auth.workspaceId,
        catalog,
        secret: deps.config.serverSecret,
        scopeKey: `segment:${seg.id}`,
        scope: (p) =>
          segmentMembershipWhere(
            { isDefault: seg.is_default, segmentSources: seg.segment_sources, conditions: seg.conditions, groupedCondition: seg.grouped_condition },
            catalog,
            { params: p, contactIdSql: 'c.id' },
          ),
      });
    },
  }),

  defineRoute({
    method: 'post',
    path: '/contacts/unique-values',
    tag: 'Contacts',
    summary: 'Distinct values of one field over the matching contacts',
    description: 'Most frequent first; multi-value fields count each element. `limit` ≤ 1000, default 100.',
    body: UniqueValuesBody,
    responses: { 200: UniqueValuesResponse },
    errors: [400, 401, 500],
    handler: async ({ body, auth, deps }) => {
      const catalog = await loadContactCatalog(deps.pool, auth.workspaceId);
      return { data: await uniqueValues(deps.pool, body, { workspaceId: auth.workspaceId, catalog }) };
    },
  }),

  defineRoute({
    method: 'get',
    path: '/contacts/{id}',
    tag: 'Contacts',
    summary: 'Get a contact',
    params: ContactIdParams,
    responses: { 200: ContactResponse },
    errors: [401, 404, 500],
    handler: async ({ params, auth, deps }) => ({ data: await oneContact(deps.pool, auth.workspaceId, params.id) }),
  }),

  defineRoute({
    method: 'patch',
    path: '/contacts/{id}',
    tag: 'Contacts',
    summary: 'Update a contact partially',
    description:
      'Only the properties present change; `null` clears a value. `company` re-resolves the primary company from its merged fields ' +
      '(matched by website domain, else name). `customFields` merge (null removes a value) and are type-checked.',
    params: ContactIdParams,
    body: PatchContactBody,
    responses: { 200: ContactResponse },
    errors: [400, 401, 404, 409, 500],
    handler: async ({ params, body, auth, deps }) => {
      const catalog = await loadContactCatalog(deps.pool, auth.workspaceId);
      await patchContact(deps.pool, auth.workspaceId, params.id, body, catalog);
      return { data: await oneContact(deps.pool, auth.workspaceId, params.id) };
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/contacts/{id}',
    tag: 'Contacts',
    summary: 'Delete a contact (soft)',
    description: 'The contact becomes `deleted`: 404 on reads, absent from lists. Automated source pulls do not revive it; an explicit single upsert does.',
    params: ContactIdParams,
    responses: { 200: ContactDeleted },
    errors: [401, 404, 500],
    handler: async ({ params, auth, deps }) => {
      await deleteContact(deps.pool, auth.workspaceId, params.id);
      return { data: { id: params.id.toLowerCase(), deleted: true as const } };
    },
  }),

  defineRoute({
    method: 'post',
    path: '/contacts/{sourceId}',
    tag: 'Contacts',
    summary: 'Upsert one contact into a source',
    description:
      "Keys are translated through the source's `sourceMeta.config.fieldMapping` when it has one (unmapped columns are ignored); " +
      'otherwise they must be paths from `GET /schema/contact`. The contact is matched by profile URL, else email, else (source, row key) ' +
      'and updated, or created; a deleted contact is revived. `_ORIGIN_` is kept on the source link.',
    params: SourceIdParams,
    body: UpsertContactBody,
    responses: { 200: ContactResponse },
    errors: [400, 401, 404, 500],
    idempotent: true,
    handler: async ({ params, body, auth, deps }) => {
      const source = await loadSource(deps.pool, auth.workspaceId, params.sourceId);
      const catalog = await loadContactCatalog(deps.pool, auth.workspaceId);
      const mapped = mapRow(body, catalog, planFor(catalog, source.source_meta?.config?.fieldMapping), '');
      if (!mapped.input) throw validationFailed(mapped.errors);
      const r = await ingestContacts(deps.pool, [mapped.input], { workspaceId: auth.workspaceId, sourceId: source.id, mode: 'explicit' });
      return { data: await oneContact(deps.pool, auth.workspaceId, r.rows[0]!.contactId) };
    },
  }),

  defineRoute({
    method: 'post',
    path: '/contacts/{sourceId}/bulk-upsert-contacts',
    tag: 'Contacts',
    summary: 'Upsert a batch of contacts into a source (asynchronous)',
    description:
      "Columns are mapped through the source's `sourceMeta.config.fieldMapping`: each `sourceFieldName` must occur in `contactsData` " +
      'and each `targetFieldName` must be a writable path of `GET /schema/contact` (else 400). The rows are staged and processed by a job; ' +
      'per-row errors are reported in `jobResponsePayload.errors` while good rows are saved. `segmentId` attaches the source to that ' +
      'segment; `webhookConfiguration` is notified when the job ends.',
    params: SourceIdParams,
    body: BulkUpsertBody,
    bodyLimit: 'bulk', // up to MAX_BULK_ROWS rows
    responses: { 202: JobAccepted },
    errors: [400, 401, 404, 500],
    idempotent: true,
    handler: async ({ params, body, auth, deps, em }) => {
      const source = await loadSource(deps.pool, auth.workspaceId, params.sourceId);
      const catalog = await loadContactCatalog(deps.pool, auth.workspaceId);
      const mapping = source.source_meta?.config?.fieldMapping ?? [];
      const mappingErrors = checkFieldMapping(catalog, mapping, '/sourceMeta/config/fieldMapping');
      if (mappingErrors.length) throw validationFailed(mappingErrors);
      if (mapping.length) {
        const present = new Set<string>();
        for (const row of body.contactsData) for (const [k] of rowKeys(row)) present.add(k);
        const missing = mapping.filter((m) => !present.has(m.sourceFieldName));
        if (missing.length)
          throw validationFailed(
            missing.map((m) => ({ path: `/contactsData`, message: `sourceFieldName ${m.sourceFieldName} of the field mapping occurs in no row` })),
          );
      } else {
        // Without a mapping the keys are catalog paths: an unknown one is a request error.
        const seen = new Set<string>();
        const bad: ErrorDetail[] = [];
        body.contactsData.forEach((row, i) => {
          for (const [k, pointer] of rowKeys(row)) {
            if (k.startsWith('_') || seen.has(k)) continue;
            seen.add(k);
            if (!catalog.get(k)?.write && bad.length < 20)
              bad.push({ path: `/contactsData/${i}${pointer}`, message: `unknown field ${k}; keys are writable paths from GET /schema/contact or columns of the source's fieldMapping` });
          }
        });
        if (bad.length) throw validationFailed(bad);
      }
      if (body.segmentId) {
        await ensureDefaultSegment(em, auth.workspaceId);
        await assertSegment(deps.pool, auth.workspaceId, body.segmentId);
      }
      if (body.webhookConfiguration) await assertOutboundUrl(body.webhookConfiguration.url, deps.config.outboundAllowList, '/webhookConfiguration/url');
      if (body.segmentId) await attachSourceToSegment(deps.pool, auth.workspaceId, body.segmentId, source.id);
      const batchId = uuidv7();
      await stageRows(deps.pool, batchId, body.contactsData);
      const accepted = await startJob(deps, {
        workspaceId: auth.workspaceId,
        type: 'bulk-upsert',
        workflowType: 'bulkUpsertContactsWorkflow',
        args: { sourceId: source.id, batchId, totalRows: body.contactsData.length },
        webhook: body.webhookConfiguration ?? null,
        searchAttributes: { SourceId: source.id },
        message: `Accepted ${body.contactsData.length} rows; poll jobStatusEndpoint for the result`,
      });
      return reply(202, accepted);
    },
  }),
];
