/**
 * Media work that does not belong in an API request (the API starts its workflow and waits for
 * the result): downloading a file from a URL through the outbound guard (≤ 50 MiB within 60 s)
 * and assembling uploaded chunks in the object store; and the retention sweep of media nobody
 * uses. A refusal (URL not allowed, too large, type not allowed, chunks that are gone: a domain
 * error) is a non-retryable `DomainError` failure carrying it (`domainErrorData`), which the API
 * turns back into the error and answers with the same 4xx as before; object store and database
 * failures are retried.
 *
 * Idempotent: the API picks the media id, so every attempt stores under the same object name and
 * an attempt that finds the row of an earlier one answers it instead of doing the work twice.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { DOMAIN_ERROR_FAILURE, domainErrorData, ExtensionMismatchError, ImportFailedError, UnknownReferenceError, UrlNotAllowedError } from '../domain/errors.js';
import { IMPORT_TIMEOUT_MS, MAX_IMPORT_BYTES } from '../domain/social.js';
import {
  claimChunks,
  composeObjects,
  deleteChunkRecords,
  detectFileType,
  findMedia,
  NOT_A_CHUNK,
  objectName,
  readHead,
  recordMedia,
  removeExpiredMedia,
  storeBuffer,
  tooLarge,
  ALLOWED_TYPES,
  type ExpiredMediaCounts,
  type StoredMedia,
} from '../db/media.js';
import type { AssembleMediaInput, ImportMediaInput } from '../workflows/contract/media.js';
import type { ActivityDeps } from './deps.js';
import { withoutTenancy } from '../db/tenancy.js';
import { checkOutboundUrl, OutboundBlockedError, OutboundTooLargeError, safeRequest } from '../infra/outbound.js';

/** Runs `work`; a refusal (a domain error) leaves as the non-retryable failure the API maps back to it. */
async function refusing<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    const data = domainErrorData(e);
    if (data) throw ApplicationFailure.create({ type: DOMAIN_ERROR_FAILURE, message: (e as Error).message, nonRetryable: true, details: [data] });
    throw e;
  }
}

const importFailed = (reason: string) => new ImportFailedError(['url'], reason);

async function download(url: string, allowList: string[]): Promise<Buffer> {
  let res;
  try {
    await checkOutboundUrl(url, allowList);
    res = await safeRequest(url, { allowList, maxBytes: MAX_IMPORT_BYTES, timeoutMs: IMPORT_TIMEOUT_MS, maxRedirects: 3, signal: Context.current().cancellationSignal });
  } catch (e) {
    if (e instanceof OutboundTooLargeError) throw tooLarge(MAX_IMPORT_BYTES);
    if (e instanceof OutboundBlockedError) throw new UrlNotAllowedError(['url'], e.message);
    throw importFailed(`download failed: ${(e as Error).message}`);
  }
  if (res.status < 200 || res.status >= 300) throw importFailed(`the server answered ${res.status}`);
  return res.body;
}

export function createMediaActivities(deps: ActivityDeps) {
  const store = deps.storage;
  return {
    async importMediaFromUrl(input: ImportMediaInput): Promise<StoredMedia> {
      const em = deps.orm.em;
      const earlier = await findMedia(em, input.id);
      if (earlier) return earlier;
      return refusing(async () => {
        const body = await download(input.url, deps.config.outboundAllowList);
        const { sha256: _, ...o } = await storeBuffer(store, body, { workspaceId: input.workspaceId, maxBytes: MAX_IMPORT_BYTES, kind: 'media', field: ['url'], id: input.id });
        await recordMedia(em, input.workspaceId, o);
        return o;
      });
    },

    async assembleMediaChunks(input: AssembleMediaInput): Promise<StoredMedia> {
      const em = deps.orm.em;
      const removeChunkObjects = () => store.client.removeObjects(store.bucket, input.chunks).catch((e) => deps.log.warn({ err: e }, 'chunk cleanup failed'));
      const earlier = await findMedia(em, input.id);
      if (earlier) {
        await deleteChunkRecords(em, input.chunks);
        await removeChunkObjects();
        return earlier;
      }
      return refusing(async () => {
        // One transaction claims the chunks (their rows locked), builds the object, records it and
        // deletes the chunk rows. A concurrent assembly of the same chunks finds them claimed (or
        // consumed) and is refused before it builds anything; a refusal or a failure rolls back
        // and leaves the chunks as they were, for a retried attempt or another request.
        const o = await em.transactional(async (tx) => {
          const sizeOf = await claimChunks(tx, input.chunks);
          const gone = input.chunks.findIndex((c) => !sizeOf.has(c));
          if (gone >= 0) throw new UnknownReferenceError(['chunks', gone, 'fileName'], NOT_A_CHUNK);
          const kind = input.kind ?? 'media';
          const type = await detectFileType(await readHead(store, input.chunks[0]!), kind, ['chunks', 0, 'fileName']);
          const storedAs = ALLOWED_TYPES[kind][type]!;
          if (storedAs !== input.ext) throw new ExtensionMismatchError(['fileExtension'], type, storedAs, input.ext);
          const total = input.chunks.reduce((n, c) => n + sizeOf.get(c)!, 0);
          const o: StoredMedia = { id: input.id, fileName: objectName(input.workspaceId, input.ext, input.id), contentType: type, sizeBytes: total };
          await composeObjects(store, input.chunks, o.fileName, type, total);
          await recordMedia(tx, input.workspaceId, o);
          await deleteChunkRecords(tx, input.chunks);
          return o;
        });
        await removeChunkObjects();
        return o;
      });
    },

    /** The retention sweep (`mediaRetentionWorkflow`): every workspace, batch by batch. */
    async removeExpiredMedia(): Promise<ExpiredMediaCounts> {
      return withoutTenancy('the media retention sweep covers every workspace', () =>
        removeExpiredMedia(deps.orm.em, store, {
          retentionHours: deps.config.media.retentionHours,
          onBatch: (counts) => Context.current().heartbeat(counts),
        }),
      );
    },
  };
}
