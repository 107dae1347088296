/**
 * Contacts (API-SPEC "Contacts", DESIGN §3-4): read, bulk fetch, filter, list by segment, unique
 * values, partial update, soft delete, single upsert into a source and asynchronous bulk upsert.
 *
 * Static paths come before `{param}` paths; `/contacts/unified-data-api` (enrichment) is
 * mounted by an earlier group.
 */
import { ingestContacts } from '../../db/contactIngest.js';
import { fetchContacts, listContacts, loadContactCatalog, uniqueValues } from '../../db/contactRead.js';
import { deleteContact, patchContact } from '../../db/contactWrite.js';
import type { AppDeps } from '../deps.js';
import { ensureDefaultSegment, findSegment } from '../../db/segments.js';
import { segmentMembershipWhere } from '../../db/segmentMembership.js';
import { notFound, unprocessable } from '../errors.js';
import { dropSuppressed, suppressionKey } from '../../db/privacy.js';
import { mapRow, planFor } from '../../domain/contactMapping.js';
import { defineRoute, reply } from '../route.js';
import { bulkUpsertContacts, loadSource, validationFailed } from '../usecases/bulkUpsertContacts.js';
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

/** One active contact of the workspace, or a 404: through the reads batched per event-loop turn (`deps.readContact`). */
async function oneContact(deps: AppDeps, workspaceId: string, id: string) {
  const c = await deps.readContact(workspaceId, id);
  if (!c) throw notFound('Contact', id);
  return c;
}

/**
 * The rules of PATCH /contacts/{id} its schema cannot carry (issue 27 item 21 allows a few such
 * operations, each named in its description; scripts/fuzz_hooks.py excuses exactly these 400s).
 */
const CONTACT_PATCH_RULES =
  'Rules this document cannot state: each custom field id and value is checked against the workspace\'s own custom fields ' +
  '(which ids exist, their type and options, from `GET /schema/contact`: 400 naming `/customFields/<id>`), and a `company.companyHeadcount` range ' +
  'whose min exceeds its max is a 400 (comparing two numbers in one string is beyond a regular expression).';

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
    handler: async ({ body, deps, scope }) => ({ data: await fetchContacts(scope.db, scope.workspaceId, body.contactIds) }),
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
    examples: {
      request: {
        fields: ['contact.fullName', 'contact.workEmail', 'company.companyName'],
        conditions: [{ field: 'contact.workEmail', operator: 'IS NOT EMPTY' }],
        groupedCondition: { operator: 'NOT', conditions: [{ field: 'company.companyName', operator: 'IN', value: ['Bletchley Park'] }] },
        limit: 50,
      },
    },
    handler: async ({ body, deps, scope }) => {
      const catalog = await loadContactCatalog(scope.db, scope.workspaceId);
      return listContacts(scope.db, body, { workspaceId: scope.workspaceId, catalog, secret: deps.config.serverSecret });
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
    handler: async ({ params, body, deps, scope }) => {
      await ensureDefaultSegment(scope.em, scope.workspaceId);
      const seg = await findSegment(scope.em, params.segmentId);
      if (!seg) throw notFound('Segment', params.segmentId);
      const catalog = await loadContactCatalog(scope.db, scope.workspaceId);
      return listContacts(scope.db, body, {
        workspaceId: scope.workspaceId,
        catalog,
        secret: deps.config.serverSecret,
        scopeKey: `segment:${seg.id}`,
        scope: segmentMembershipWhere(
          { isDefault: seg.isDefault, segmentSources: seg.segmentSources, conditions: seg.conditions, groupedCondition: seg.groupedCondition },
          catalog,
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
    handler: async ({ body, deps, scope }) => {
      const catalog = await loadContactCatalog(scope.db, scope.workspaceId);
      return { data: await uniqueValues(scope.db, body, { workspaceId: scope.workspaceId, catalog }) };
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
    // The hottest read, through the pool (no entity manager), batched with the reads of the same event-loop turn.
    orm: false,
    handler: async ({ params, deps, scope }) => ({ data: await oneContact(deps, scope.workspaceId, params.id) }),
  }),

  defineRoute({
    method: 'patch',
    path: '/contacts/{id}',
    tag: 'Contacts',
    summary: 'Update a contact partially',
    description:
      'Only the properties present change; `null` clears a value. `firstName` or `lastName` without `fullName` re-derives `fullName` ' +
      '(first and last name joined by a space, or the one present). `company` links the contact to the company record its merged fields ' +
      'match (by website domain, else name), or to a new record: company records are shared by the contacts of that company, so a PATCH ' +
      'never edits one (a given field the matched record holds otherwise is 409 `company_conflict` naming it, nothing written). ' +
      '`customFields` merge (null removes a value) and are type-checked. ' +
      CONTACT_PATCH_RULES,
    params: ContactIdParams,
    body: PatchContactBody,
    examples: { request: { title: 'Analyst', pronet: 'https://www.linkedin.com/in/ada-lovelace', company: { companyName: 'Analytical Engines', companyWebsite: 'analytical.example', companyHeadcount: '51-200' } } },
    responses: { 200: ContactResponse },
    errors: [400, 401, 404, 409, 500], errorCodes: ['conflict', 'company_conflict'],
    handler: async ({ params, body, deps, scope }) => {
      const catalog = await loadContactCatalog(scope.db, scope.workspaceId);
      await patchContact(scope.db, scope.workspaceId, params.id, body, catalog);
      return { data: await oneContact(deps, scope.workspaceId, params.id) };
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
    handler: async ({ params, deps, scope }) => {
      await deleteContact(scope.db, params.id);
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
      'otherwise they must be paths from `GET /schema/contact`. Rule this document cannot state: which keys a row may carry is the source\'s own ' +
      'field mapping (per workspace, set through `/sources`), so a key that is neither a mapped column nor such a path is a 400 naming it. The contact is matched by profile URL, else email, else (source, row key) ' +
      'and updated, or created; a deleted contact is revived. `_ORIGIN_` is kept on the source link.',
    params: SourceIdParams,
    body: UpsertContactBody,
    responses: { 200: ContactResponse },
    errors: [400, 401, 404, 422, 500], errorCodes: ['contact_suppressed'],
    examples: { request: { 'contact.firstName': 'Ada', 'contact.lastName': 'Lovelace', 'contact.workEmail': 'ada@analytical.example', 'company.companyName': 'Analytical Engines' } },
    idempotent: true,
    handler: async ({ params, body, deps, scope }) => {
      const source = await loadSource(scope.em, params.sourceId);
      const catalog = await loadContactCatalog(scope.db, scope.workspaceId);
      const mapped = mapRow(body, catalog, planFor(catalog, source.sourceMeta?.config?.fieldMapping), '');
      if (!mapped.input) throw validationFailed(mapped.errors);
      const { suppressed } = await dropSuppressed(scope.db, scope.workspaceId, [mapped.input], suppressionKey(deps.config.serverSecret));
      if (suppressed) throw unprocessable('contact_suppressed', 'The contact is on the workspace suppression list (docs/PRIVACY.md): it was not written');
      const r = await ingestContacts(scope.db, [mapped.input], { workspaceId: scope.workspaceId, sourceId: source.id, mode: 'explicit' });
      return { data: await oneContact(deps, scope.workspaceId, r.rows[0]!.contactId) };
    },
  }),

  defineRoute({
    method: 'post',
    path: '/contacts/{sourceId}/bulk-upsert-contacts',
    tag: 'Contacts',
    summary: 'Upsert a batch of contacts into a source (asynchronous)',
    description:
      "Columns are mapped through the source's `sourceMeta.config.fieldMapping`: each `sourceFieldName` must occur in `contactsData` " +
      'and each `targetFieldName` must be a writable path of `GET /schema/contact` (else 400). ' +
      "Rule this document cannot state: the mapping is the source's own (per workspace, set through `/sources`), so which keys the rows " +
      'may and must carry is not in this schema: a mapped `sourceFieldName` that occurs in no row is a 400 naming `/contactsData`, a key that is ' +
      'neither a mapped column nor a writable path a 400 naming it. The rows are staged and processed by a job; ' +
      'per-row errors are reported in `jobResponsePayload.errors` while good rows are saved. `segmentId` attaches the source to that ' +
      'segment; `webhookConfiguration` is notified when the job ends. ' +
      'Instead of inline rows, `contactsFile.fileName` may name a CSV or JSON Lines file uploaded through `POST /contact-files` or ' +
      '`POST /contact-files/assemble-chunks` (send `contactsData: []`): the same job imports it, streamed from storage. A file whose detected type is ' +
      'not `text/csv` / `application/x-ndjson`, or a CSV header that lacks a mapped column (or, without a mapping, names a column that is no ' +
      'writable path), is a 400 naming `/contactsFile/fileName`. A malformed record (CSV quoting, wrong field count, a line that is not a ' +
      'JSON object, bytes that are not UTF-8) is a row error (`path` `/contactsFile/rows/<row>`, `row` counting data records from 0, blank lines not counted); ' +
      'JSON Lines keys are checked row by row. While the file is read, `progress.total` and `jobResponsePayload.totalRows` are the rows read ' +
      'so far, `progress.percent` the share of the file\'s bytes whose rows are done, and `jobResponsePayload.contactsFile` says how far ' +
      'the file was read (`bytesRead`, `complete`).',
    params: SourceIdParams,
    body: BulkUpsertBody,
    bodyLimit: 'bulk', // up to MAX_BULK_ROWS rows
    examples: { request: { contactsData: [{ 'contact.firstName': 'Ada', 'contact.lastName': 'Lovelace', 'contact.workEmail': 'ada@analytical.example', 'company.companyName': 'Analytical Engines' }] } },
    responses: { 202: JobAccepted },
    errors: [400, 401, 404, 500], errorCodes: ['file_type_not_allowed'],
    idempotent: true,
    handler: async ({ params, body, deps, scope }) => reply(202, await bulkUpsertContacts(scope, deps, params.sourceId, body)),
  }),
];
