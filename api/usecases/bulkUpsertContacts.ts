/**
 * `POST /contacts/{sourceId}/bulk-upsert-contacts` as one use case: the route only adapts HTTP to
 * it. Checks the source's field mapping, the rows (inline, or a contacts file's type and CSV
 * header) and the segment and webhook named, stages inline rows, and starts the `bulk-upsert` job
 * that imports them. Every statement goes through the request's `scope` (its entity manager, and
 * its pool in the workspace's row-level security scope); nothing here picks a handle of its own.
 */
import type { Static } from '@sinclair/typebox';
import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import type { WorkspaceScope } from '../../db/scope.js';
import { loadContactCatalog } from '../../db/contactRead.js';
import { stageRows } from '../../db/contactStaging.js';
import { findContactFile, readCsvHeader } from '../../db/contactFile.js';
import { assertSegment, attachSourceToSegment } from '../../db/segmentLinks.js';
import { ensureDefaultSegment } from '../../db/segments.js';
import { findSource, type SourceEntity } from '../../db/sources.js';
import { formatOf } from '../../domain/contactFile.js';
import { addRowKeys, checkFieldMapping } from '../../domain/contactMapping.js';
import { badRequest, invalidField, type ErrorDetail } from '../../domain/errors.js';
import { isUuid } from '../../domain/ids.js';
import type { AppDeps } from '../deps.js';
import { notFound, notFoundField } from '../errors.js';
import { startJob } from '../jobs.js';
import { assertWebhookConfiguration } from '../outboundUrls.js';
import type { BulkUpsertBody } from '../schemas/contacts.js';
import type { JobAcceptedBody } from '../jobs.js';

/** The source a contact write names, as far as mapping needs it; a malformed or foreign id is a 404. */
export async function loadSource(em: EntityManager, id: string): Promise<SourceEntity> {
  const source = isUuid(id) ? await findSource(em, id) : null;
  if (!source) throw notFound('Source', id);
  return source;
}

export const validationFailed = (details: ErrorDetail[]) =>
  badRequest('validation_failed', details.map((d) => `${d.path}: ${d.message}`).slice(0, 5).join('; '), details.slice(0, 100));

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
async function checkContactsFile(scope: WorkspaceScope, storage: AppDeps['storage'], fileName: string, inlineRows: number) {
  const path = '/contactsFile/fileName';
  if (inlineRows) throw invalidField('/contactsData', 'must be empty ([]) when contactsFile is given: the rows come from the file');
  const found = await findContactFile(scope.db, fileName);
  if (!found) throw notFoundField(path, 'is not a file of this workspace: upload it with POST /contact-files (or its chunks and POST /contact-files/assemble-chunks) and send the fileName returned');
  const format = formatOf(found.contentType);
  if (!format)
    throw badRequest('file_type_not_allowed', `${path}: the file holds ${found.contentType}; a contacts file is text/csv or application/x-ndjson`, [
      { path, message: `holds ${found.contentType}, not text/csv or application/x-ndjson` },
    ]);
  if (format === 'jsonl') return { format, sizeBytes: found.sizeBytes, header: undefined };
  const h = await readCsvHeader(storage, fileName);
  if (!h.header) throw invalidField(path, h.problem!);
  return { format, sizeBytes: found.sizeBytes, header: new Map(h.header.map((c) => [c, path])) };
}

/** Checks the request, stages its inline rows and starts the job: what the route answers with 202. */
export async function bulkUpsertContacts(scope: WorkspaceScope, deps: AppDeps, sourceId: string, body: Static<typeof BulkUpsertBody>): Promise<JobAcceptedBody> {
  const source = await loadSource(scope.em, sourceId);
  const catalog = await loadContactCatalog(scope.db, scope.workspaceId);
  const mapping = source.sourceMeta?.config?.fieldMapping ?? [];
  const mappingErrors = checkFieldMapping(catalog, mapping, '/sourceMeta/config/fieldMapping');
  if (mappingErrors.length) throw validationFailed(mappingErrors);
  // The rows: inline, or a contacts file (checked here as far as its type and CSV header).
  const file = body.contactsFile ? await checkContactsFile(scope, deps.storage, body.contactsFile.fileName, body.contactsData.length) : undefined;
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
    await ensureDefaultSegment(scope.em, scope.workspaceId);
    await assertSegment(scope.em, body.segmentId);
  }
  await assertWebhookConfiguration(body.webhookConfiguration, deps.config.outboundAllowList);
  if (body.segmentId) await attachSourceToSegment(scope.db, body.segmentId, source.id);
  const batchId = uuidv7();
  if (!file) await stageRows(scope.db, batchId, body.contactsData);
  return startJob(deps, {
    workspaceId: scope.workspaceId,
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
}
