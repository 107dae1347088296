/**
 * Media: multipart upload streamed into the object store (type checked by content), server-side
 * assembly of chunks uploaded separately, and import from a public URL through the outbound
 * URL guard. Assembly and import run as workflows on the worker (api/mediaWorkflows.ts); the
 * route waits for their result. Every answer is a media object with a presigned `readUrl` (15 minutes).
 */
import { PassThrough, Writable } from 'node:stream';
import formidable from 'formidable';
import type { Context } from 'koa';
import { v7 as uuidv7 } from 'uuid';
import { badRequest, invalidField } from '../../domain/errors.js';
import { ApiError } from '../errors.js';
import { MAX_ASSEMBLED_BYTES, MAX_CHUNK_BYTES, MAX_UPLOAD_BYTES, READ_URL_TTL_SECS } from '../../domain/social.js';
import { chunkSizes, NOT_A_CHUNK, recordMedia, storeStream, tooLarge, UPLOAD_TYPES, type StoredObject } from '../../db/media.js';
import type { ObjectStore } from '../../infra/objectStore.js';
import { mediaAssemblyWorkflow } from '../../workflows/mediaAssembly.js';
import { mediaImportWorkflow } from '../../workflows/mediaImport.js';
import { runMediaWorkflow } from '../mediaWorkflows.js';
import { defineRoute } from '../route.js';
import { assertUncompressedBody } from '../validation.js';
import { AssembleChunksBody, ImportFromUrlBody, MediaObject, UploadQuery, type MediaObjectJson } from '../schemas/media.js';

/** A stored object as the media routes answer it, with a presigned read URL. */
async function mediaJson(store: ObjectStore, o: StoredObject): Promise<MediaObjectJson> {
  return { fileName: o.fileName, fileSizeInBytes: o.sizeBytes, contentType: o.contentType, readUrl: await store.readUrl(o.fileName, READ_URL_TTL_SECS) };
}

/** S3 multipart copy: every source but the last must be at least 5 MiB. */
const MIN_COMPOSE_PART_BYTES = 5 * 1024 * 1024;
const EXTENSION_ALIASES: Record<string, string> = { jpeg: 'jpg', qt: 'mov', ndjson: 'jsonl' };

/** Streams the multipart part named `file` into the store; other parts are ignored. */
async function receiveUpload(ctx: Context, store: ObjectStore, workspaceId: string, chunk: boolean): Promise<StoredObject> {
  if (!ctx.is('multipart/form-data')) {
    throw new ApiError(415, 'unsupported_media_type', 'Send the file as multipart/form-data with a part named "file"');
  }
  // As on the JSON routes: a compressed (or unknown) Content-Encoding is a 415, not bytes parsed as if sent uncompressed.
  assertUncompressedBody(ctx.req);
  const maxBytes = chunk ? MAX_CHUNK_BYTES : MAX_UPLOAD_BYTES;
  let stored: Promise<StoredObject> | undefined;
  const form = formidable({
    maxFiles: 1,
    maxFields: 10,
    maxFieldsSize: 64 * 1024,
    maxFileSize: maxBytes,
    maxTotalFileSize: maxBytes,
    allowEmptyFiles: false,
    filter: (part) => part.name === 'file',
    fileWriteStreamHandler: () => {
      // formidable opens a further file before failing on maxFiles: only the first is stored.
      if (stored) return new Writable({ write: (_chunk, _enc, cb) => cb() });
      const sink = new PassThrough();
      stored = storeStream(store, sink, { workspaceId, maxBytes, chunk, field: ['file'] });
      // On refusal keep reading the request so the client receives the answer.
      stored.catch(() => {
        sink.unpipe();
        sink.resume();
      });
      return sink;
    },
  });
  try {
    await form.parse(ctx.req);
  } catch (e) {
    // formidable stops reading on a limit and leaves the request paused: discard the rest.
    ctx.req.resume();
    // A file already stored before the body turned out invalid (e.g. a second `file` part) is removed.
    const orphan = await stored?.catch(() => undefined);
    if (orphan) await store.client.removeObject(store.bucket, orphan.fileName).catch(() => {});
    const err = e as { httpCode?: number; message?: string };
    if (/maxFiles/.test(err.message ?? '')) throw badRequest('invalid_multipart', 'Send exactly one part named "file"', [{ path: '/file', message: 'is sent more than once' }]);
    if (err.httpCode === 413) throw tooLarge(maxBytes);
    if (/allowEmptyFiles/.test(err.message ?? '')) throw invalidField('/file', 'is empty');
    throw badRequest('invalid_multipart', `Malformed multipart body: ${err.message ?? 'could not be parsed'}`);
  }
  if (!stored) throw invalidField('/file', 'is required: send one multipart part named "file"');
  return await stored;
}

/** Where a slow import or assembly stands when the request's deadline passes (api/mediaWorkflows.ts). */
const DEADLINE_NOTE =
  ' The work runs on a worker; the request waits for it up to `MEDIA_REQUEST_DEADLINE_MS` (90 s by default), then answers 504 ' +
  '`media_deadline_exceeded` while the work goes on: the same request sent again with the same `Idempotency-Key` answers its result ' +
  '(without a key the result cannot be fetched, and the file is removed by media retention).';

export const mediaRoutes = [
  defineRoute({
    method: 'post',
    path: '/v1/media/upload',
    tag: 'Social publishing',
    summary: 'Upload a media file',
    description:
      'multipart/form-data with one part named `file` (≤ 50 MiB). The type is detected from the bytes, never taken from the declared type; allowed: ' +
      `${Object.keys(UPLOAD_TYPES).join(', ')} (else 400 \`file_type_not_allowed\`). \`text/csv\` and \`application/x-ndjson\` are contacts files ` +
      'for `contactsFile` of `POST /contacts/{sourceId}/bulk-upsert-contacts` (UTF-8 text without control characters; JSON Lines when the first ' +
      'line is a JSON object, CSV when a header line is followed by a record of as many fields), not media for posts. With `?chunk=true` the part ' +
      'is stored as one chunk (≤ 10 MiB) for `POST /v1/media/assemble-chunks`. `Idempotency-Key` binds to the query and the SHA-256 of the ' +
      "file's bytes (not the multipart framing, whose boundary differs per request): the same key and file within 24 h replays the " +
      'first response (same `fileName`; its `readUrl` may have expired) and stores nothing new; the same key with another file is 422.',
    contentType: 'multipart/form-data',
    query: UploadQuery,
    responses: { 200: MediaObject },
    errors: [400, 401, 413, 415, 500], errorCodes: ['invalid_multipart', 'file_type_not_allowed', 'file_extension_mismatch'],
    idempotent: true,
    handler: async ({ ctx, query, auth, deps, em, claimIdempotency }) => {
      const chunk = query.chunk === true;
      const o = await receiveUpload(ctx, deps.storage, auth.workspaceId, chunk);
      let replayed;
      try {
        replayed = await claimIdempotency({ chunk, sha256: o.sha256, sizeBytes: o.sizeBytes });
      } catch (e) {
        await deps.storage.client.removeObject(deps.storage.bucket, o.fileName).catch(() => {});
        throw e;
      }
      // A replay answers the first upload's object: the copy just received is not kept.
      if (replayed) {
        await deps.storage.client.removeObject(deps.storage.bucket, o.fileName).catch(() => {});
        return replayed;
      }
      await recordMedia(em, auth.workspaceId, o, chunk);
      return mediaJson(deps.storage, o);
    },
  }),

  defineRoute({
    method: 'post',
    path: '/v1/media/assemble-chunks',
    tag: 'Social publishing',
    summary: 'Assemble uploaded chunks into one media file',
    description:
      'Concatenates chunks uploaded with `POST /v1/media/upload?chunk=true`, server-side, in `chunkNumber` order. Chunks ≤ 10 MiB, ' +
      'all but the last ≥ 5 MiB, result ≤ 1 GiB. The result must be an allowed type (detected from the first chunk\'s bytes, as for uploads: ' +
      'else 400 `file_type_not_allowed`) matching `fileExtension` (`csv`, `jsonl` or `ndjson` for contacts files; else 400 ' +
      '`file_extension_mismatch`); the chunks are consumed: of concurrent requests for the same chunks one assembles them, the others ' +
      'get 400 `validation_failed` (not a chunk of this workspace).' +
      DEADLINE_NOTE,
    body: AssembleChunksBody,
    bodyLimit: 4 * 1024 * 1024, // up to MAX_CHUNKS file names
    responses: { 200: MediaObject },
    errors: [400, 401, 413, 500, 504], errorCodes: ['file_type_not_allowed', 'file_extension_mismatch', 'media_deadline_exceeded'],
    idempotent: true,
    handler: async ({ ctx, body, auth, deps, em }) => {
      const chunks = body.chunks;
      chunks.forEach((c, i) => {
        const expected = chunks[0]!.chunkNumber + i;
        if (i === 0 && c.chunkNumber > 1) throw invalidField('/chunks/0/chunkNumber', 'must be 0 or 1 (the first chunk)');
        if (c.chunkNumber !== expected) throw invalidField(`/chunks/${i}/chunkNumber`, `must be ${expected}: chunks are listed in order, numbers consecutive`);
      });
      const names = chunks.map((c) => c.fileName);
      const dup = names.findIndex((n, i) => names.indexOf(n) !== i);
      if (dup >= 0) throw invalidField(`/chunks/${dup}/fileName`, 'is listed twice');
      const sizeOf = await chunkSizes(em, names);
      chunks.forEach((c, i) => {
        if (!sizeOf.has(c.fileName)) throw invalidField(`/chunks/${i}/fileName`, NOT_A_CHUNK);
      });
      let total = 0;
      chunks.forEach((c, i) => {
        const size = sizeOf.get(c.fileName)!;
        if (i < chunks.length - 1 && size < MIN_COMPOSE_PART_BYTES) {
          throw invalidField(`/chunks/${i}/fileName`, `is ${size} bytes; every chunk but the last must be at least ${MIN_COMPOSE_PART_BYTES} bytes`);
        }
        total += size;
      });
      if (total > MAX_ASSEMBLED_BYTES) throw tooLarge(MAX_ASSEMBLED_BYTES, 'Assembled file');

      const wantedExt = body.fileExtension.replace(/^\./, '').toLowerCase();
      const ext = EXTENSION_ALIASES[wantedExt] ?? wantedExt;
      if (!Object.values(UPLOAD_TYPES).includes(ext)) {
        throw invalidField('/fileExtension', `must be one of ${[...Object.values(UPLOAD_TYPES), ...Object.keys(EXTENSION_ALIASES)].join(', ')}`);
      }
      const args = { workspaceId: auth.workspaceId, chunks: names, ext, id: uuidv7() };
      const o = await runMediaWorkflow(deps, { kind: 'assembly', workflow: mediaAssemblyWorkflow, args, ctx, body });
      return mediaJson(deps.storage, o);
    },
  }),

  defineRoute({
    method: 'post',
    path: '/v1/media/import-from-url',
    tag: 'Social publishing',
    summary: 'Import a media file from a public URL',
    description:
      'Downloads the URL (public addresses only, checked after DNS and on each redirect; ≤ 50 MiB within 60 s) into workspace storage. ' +
      'The type is detected from the bytes, as for uploads.' + DEADLINE_NOTE,
    body: ImportFromUrlBody,
    responses: { 200: MediaObject },
    errors: [400, 401, 413, 500, 504], errorCodes: ['url_not_allowed', 'import_failed', 'file_type_not_allowed', 'file_extension_mismatch', 'media_deadline_exceeded'],
    idempotent: true,
    handler: async ({ ctx, body, auth, deps }) => {
      const args = { workspaceId: auth.workspaceId, url: body.url, id: uuidv7() };
      const o = await runMediaWorkflow(deps, { kind: 'import', workflow: mediaImportWorkflow, args, ctx, body });
      return mediaJson(deps.storage, o);
    },
  }),
];

