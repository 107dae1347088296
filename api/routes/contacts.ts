/**
 * Contacts (API-SPEC "Contacts", DESIGN §3-4): read, bulk fetch, filter, list by segment, unique
 * values, partial update, soft delete, single upsert into a source and asynchronous bulk upsert.
 *
 * Static paths come before `{param}` paths; `/contacts/unified-data-api` (enrichment) is
 * mounted by an earlier group.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import { assertWebhookConfiguration } from '../outboundUrls.js';
import { ingestContacts } from '../../db/contactIngest.js';
import { fetchContacts, listContacts, loadContactCatalog, uniqueValues } from '../../db/contactRead.js';
import { stageRows } from '../../db/contactStaging.js';
import { findContactFile, readCsvHeader } from '../../db/contactFile.js';
import { formatOf } from '../../domain/contactFile.js';
import { deleteContact, patchContact } from '../../db/contactWrite.js';
import type { AppDeps } from '../deps.js';
import { assertSegment, attachSourceToSegment } from '../../db/segmentLinks.js';
import { ensureDefaultSegment, findSegment } from '../../db/segments.js';
import { findSource, type SourceEntity } from '../../db/sources.js';
import { segmentMembershipWhere } from '../../db/segmentMembership.js';
import { badRequest, invalidField, type ErrorDetail } from '../../domain/errors.js';
import { notFound, notFoundField, unprocessable } from '../errors.js';
import { dropSuppressed, suppressionKey } from '../../db/privacy.js';
import { isUuid } from '../../domain/ids.js';
import { addRowKeys, checkFieldMapping, mapRow, planFor } from '../../domain/contactMapping.js';
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

/** The source a contact write names, as far as mapping needs it; a malformed or foreign id is a 404. */
async function loadSource(em: EntityManager, id: string): Promise<SourceEntity> {
  const source = isUuid(id) ? await findSource(em, id) : null;
  if (!source) throw notFound('Source', id);
  return source;
}

/** One active contact of the workspace, or a 404: through the reads batched per event-loop turn (`deps.readContact`). */
async function oneContact(deps: AppDeps, workspaceId: string, id: string) {
  const c = await deps.readContact(workspaceId, id);
  if (!c) throw notFound('Contact', id);
  return c;
}

/** Column names of inline rows (as mapping sees them), each with its JSON pointer in the first row that has it. */
function columnsOf(rows: Record<string, unknown>[]): Map<string, string> {
  const columns = new Map<string, string>();
  rows.forEach((row, i) => addRowKeys(row, `/contactsData/${i}`, columns));
  return columns;
}

/**
 * The contacts file of a bulk upsert: a media object of the workspace whose detected type is CSV
 * or JSON Lines, and for CSV a usable header (its columns, checked against the mapping like the
 * keys of inline rows). JSON Lines rows are checked one by one as they are imported.
 */
async function checkContactsFile(deps: AppDeps, workspaceId: string, fileName: string, inlineRows: number) {
  const path = '/contactsFile/fileName';
  if (inlineRows) throw invalidField('/contactsData', 'must be empty ([]) when contactsFile is given: the rows come from the file');
  const found = await findContactFile(deps.pool, fileName);
  if (!found) throw notFoundField(path, 'is not a file of this workspace: upload it with POST /contact-files (or its chunks and POST /contact-files/assemble-chunks) and send the fileName returned');
  const format = formatOf(found.contentType);
  if (!format)
    throw badRequest('file_type_not_allowed', `${path}: the file holds ${found.contentType}; a contacts file is text/csv or application/x-ndjson`, [
      { path, message: `holds ${found.contentType}, not text/csv or application/x-ndjson` },
    ]);
  if (format === 'jsonl') return { format, sizeBytes: found.sizeBytes, header: undefined };
  const h = await readCsvHeader(deps.storage, fileName);
  if (!h.header) throw invalidField(path, h.problem!);
  return { format, sizeBytes: found.sizeBytes, header: new Map(h.header.map((c) => [c, path])) };
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
    examples: {
      request: {
        fields: ['contact.fullName', 'contact.workEmail', 'company.companyName'],
        conditions: [{ field: 'contact.workEmail', operator: 'IS NOT EMPTY' }],
        groupedCondition: { operator: 'NOT', conditions: [{ field: 'company.companyName', operator: 'IN', value: ['Bletchley Park'] }] },
        limit: 50,
      },
    },
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
      const seg = await findSegment(em, params.segmentId);
      if (!seg) throw notFound('Segment', params.segmentId);
      const catalog = await loadContactCatalog(deps.pool, auth.workspaceId);
      return listContacts(deps.pool, body, {
        workspaceId: auth.workspaceId,
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
    // The hottest read, through the pool (no entity manager), batched with the reads of the same event-loop turn.
    orm: false,
    handler: async ({ params, auth, deps }) => ({ data: await oneContact(deps, auth.workspaceId, params.id) }),
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
      '`customFields` merge (null removes a value) and are type-checked.',
    params: ContactIdParams,
    body: PatchContactBody,
    responses: { 200: ContactResponse },
    errors: [400, 401, 404, 409, 500], errorCodes: ['conflict', 'company_conflict'],
    handler: async ({ params, body, auth, deps }) => {
      const catalog = await loadContactCatalog(deps.pool, auth.workspaceId);
      await patchContact(deps.pool, auth.workspaceId, params.id, body, catalog);
      return { data: await oneContact(deps, auth.workspaceId, params.id) };
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
      await deleteContact(deps.pool, params.id);
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
    errors: [400, 401, 404, 422, 500], errorCodes: ['contact_suppressed'],
    examples: { request: { 'contact.firstName': 'Ada', 'contact.lastName': 'Lovelace', 'contact.workEmail': 'ada@analytical.example', 'company.companyName': 'Analytical Engines' } },
    idempotent: true,
    handler: async ({ params, body, auth, deps, em }) => {
      const source = await loadSource(em, params.sourceId);
      const catalog = await loadContactCatalog(deps.pool, auth.workspaceId);
      const mapped = mapRow(body, catalog, planFor(catalog, source.sourceMeta?.config?.fieldMapping), '');
      if (!mapped.input) throw validationFailed(mapped.errors);
      const { suppressed } = await dropSuppressed(deps.pool, auth.workspaceId, [mapped.input], suppressionKey(deps.config.serverSecret));
      if (suppressed) throw unprocessable('contact_suppressed', 'The contact is on the workspace suppression list (docs/PRIVACY.md): it was not written');
      const r = await ingestContacts(deps.pool, [mapped.input], { workspaceId: auth.workspaceId, sourceId: source.id, mode: 'explicit' });
      return { data: await oneContact(deps, auth.workspaceId, r.rows[0]!.contactId) };
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
    responses: { 202: JobAccepted },
    errors: [400, 401, 404, 500], errorCodes: ['file_type_not_allowed'],
    idempotent: true,
    handler: async ({ params, body, auth, deps, em }) => {
      const source = await loadSource(em, params.sourceId);
      const catalog = await loadContactCatalog(deps.pool, auth.workspaceId);
      const mapping = source.sourceMeta?.config?.fieldMapping ?? [];
      const mappingErrors = checkFieldMapping(catalog, mapping, '/sourceMeta/config/fieldMapping');
      if (mappingErrors.length) throw validationFailed(mappingErrors);
      // The rows: inline, or a contacts file (checked here as far as its type and CSV header).
      const file = body.contactsFile ? await checkContactsFile(deps, auth.workspaceId, body.contactsFile.fileName, body.contactsData.length) : undefined;
      if (!file && !body.contactsData.length) throw invalidField('/contactsData', 'must NOT have fewer than 1 items (or send contactsFile)');
      const columns = file ? file.header : columnsOf(body.contactsData);
      if (columns) {
        const where = file ? '/contactsFile/fileName' : '/contactsData';
        if (mapping.length) {
          const missing = mapping.filter((m) => !columns.has(m.sourceFieldName));
          if (missing.length)
            throw validationFailed(missing.map((m) => ({ path: where, message: `sourceFieldName ${m.sourceFieldName} of the field mapping occurs in no ${file ? 'column of the file' : 'row'}` })));
        } else {
          // Without a mapping the keys are catalog paths: an unknown one is a request error.
          const bad: ErrorDetail[] = [];
          for (const [k, pointer] of columns) {
            if (k.startsWith('_') || catalog.get(k)?.write) continue;
            if (bad.length < 20)
              bad.push({
                path: pointer,
                message: `unknown ${file ? 'column' : 'field'} ${k}; keys are writable paths from GET /schema/contact or columns of the source's fieldMapping`,
              });
          }
          if (bad.length) throw validationFailed(bad);
        }
      }
      if (body.segmentId) {
        await ensureDefaultSegment(em, auth.workspaceId);
        await assertSegment(em, body.segmentId);
      }
      await assertWebhookConfiguration(body.webhookConfiguration, deps.config.outboundAllowList);
      if (body.segmentId) await attachSourceToSegment(deps.pool, body.segmentId, source.id);
      const batchId = uuidv7();
      if (!file) await stageRows(deps.pool, batchId, body.contactsData);
      const accepted = await startJob(deps, {
        workspaceId: auth.workspaceId,
        job: 'bulk-upsert',
        args: file
          ? { sourceId: source.id, batchId, totalRows: 0, file: { fileName: body.contactsFile!.fileName, format: file.format, sizeBytes: file.sizeBytes } }
          : { sourceId: source.id, batchId, totalRows: body.contactsData.length },
        webhook: body.webhookConfiguration ?? null,
        searchAttributes: { SourceId: source.id },
        message: file
          ? `Accepted ${file.format === 'csv' ? 'CSV' : 'JSON Lines'} file ${body.contactsFile!.fileName}; poll jobStatusEndpoint for the progress and result`
          : `Accepted ${body.contactsData.length} rows; poll jobStatusEndpoint for the result`,
      });
      return reply(202, accepted);
    },
  }),
];
