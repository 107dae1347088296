/**
 * The two ways files come in, shared by their route groups: media for posts (api/routes/media.ts)
 * and contacts files for bulk upserts (api/routes/contactFiles.ts). Both stream one multipart
 * part into the object store (its declared type and its bytes checked against the kind's types)
 * or assemble chunks server-side; each takes only its own kind of file.
 */
import { PassThrough, Writable } from 'node:stream';
import formidable, { errors as formidableErrors } from 'formidable';
import type { Context } from 'koa';
import { v7 as uuidv7 } from 'uuid';
import { badRequest, invalidField } from '../domain/errors.js';
import { ApiError, notFoundField } from './errors.js';
import { MAX_ASSEMBLED_BYTES, MAX_CHUNK_BYTES, MAX_UPLOAD_BYTES, READ_URL_TTL_SECS } from '../domain/social.js';
import { ALLOWED_TYPES, CHUNK_CONTENT_TYPE, chunkSizes, declaredType, NOT_A_CHUNK, recordMedia, storeStream, tooLarge, type FileKind, type StoredObject } from '../db/media.js';
import type { ObjectStore } from '../infra/objectStore.js';
import { runMediaWorkflow } from './mediaWorkflows.js';
import type { RouteInput, RouteResult } from './route.js';
import { assertUncompressedBody } from './validation.js';
import type { AssembleChunksBody, MediaObjectJson } from './schemas/media.js';

/** A stored object as the upload routes answer it, with a presigned read URL. */
export async function mediaJson(store: ObjectStore, o: StoredObject): Promise<MediaObjectJson> {
  return { fileName: o.fileName, fileSizeInBytes: o.sizeBytes, contentType: o.contentType, readUrl: await store.readUrl(o.fileName, READ_URL_TTL_SECS) };
}

/** What the server reads of the parts besides `file` before it answers 413 (they are ignored). */
const MAX_OTHER_PARTS = 1000;
const MAX_OTHER_PARTS_BYTES = 64 * 1024;
/** S3 multipart copy: every source but the last must be at least 5 MiB. */
const MIN_COMPOSE_PART_BYTES = 5 * 1024 * 1024;
const EXTENSION_ALIASES: Record<FileKind, Record<string, string>> = { media: { jpeg: 'jpg', qt: 'mov' }, contactsFile: { ndjson: 'jsonl' } };

/** The extensions `fileExtension` may name for `kind`, aliases included. */
export const extensionsOf = (kind: FileKind) => [...Object.values(ALLOWED_TYPES[kind]), ...Object.keys(EXTENSION_ALIASES[kind])];

/** Streams the multipart part named `file` into the store; other parts are ignored. */
async function receiveUpload(ctx: Context, store: ObjectStore, workspaceId: string, kind: FileKind, chunk: boolean): Promise<StoredObject> {
  if (!ctx.is('multipart/form-data')) {
    throw new ApiError(415, 'unsupported_media_type', 'Send the file as multipart/form-data with a part named "file"');
  }
  // As on the JSON routes: a compressed (or unknown) Content-Encoding is a 415, not bytes parsed as if sent uncompressed.
  assertUncompressedBody(ctx.req);
  const maxBytes = chunk ? MAX_CHUNK_BYTES : MAX_UPLOAD_BYTES;
  let stored: Promise<StoredObject> | undefined;
  const form = formidable({
    maxFiles: 1,
    // Other parts are ignored, and the document allows any number of them; these bound only what
    // the server holds of them (formidable's own default count, 64 KiB in all).
    maxFields: MAX_OTHER_PARTS,
    maxFieldsSize: MAX_OTHER_PARTS_BYTES,
    maxFileSize: maxBytes,
    maxTotalFileSize: maxBytes,
    allowEmptyFiles: false,
    filter: (part) => part.name === 'file',
    fileWriteStreamHandler: (file) => {
      // formidable opens a further file before failing on maxFiles: only the first is stored.
      if (stored) return new Writable({ write: (_chunk, _enc, cb) => cb() });
      const sink = new PassThrough();
      const declared = undeclared ? undefined : (file as { mimetype?: string | null } | undefined)?.mimetype;
      // Inside the promise: a refused type rejects `stored` (answered below), it must not throw into formidable.
      stored = (async () => {
        // A chunk is untyped bytes until assembly: a part that declares no type is one too.
        const type = chunk && !declared ? CHUNK_CONTENT_TYPE : declaredType(declared, kind, chunk);
        return storeStream(store, sink, { workspaceId, maxBytes, kind, chunk, declared: type, field: ['file'] });
      })();
      // On refusal keep reading the request so the client receives the answer.
      stored.catch(() => {
        sink.unpipe();
        sink.resume();
      });
      return sink;
    },
  });
  // formidable takes a part without a Content-Type for a form field, even with a filename; the
  // part named `file` is the file whatever it declares (RFC 7578 makes the type optional).
  let undeclared = false;
  form.onPart = (part) => {
    if (part.name === 'file' && !part.mimetype) {
      undeclared = true;
      part.mimetype = CHUNK_CONTENT_TYPE;
    }
    return (form as unknown as { _handlePart(p: typeof part): void })._handlePart(part);
  };
  try {
    await form.parse(ctx.req);
  } catch (e) {
    // formidable stops reading on a limit and leaves the request paused: discard the rest.
    ctx.req.resume();
    // A file already stored before the body turned out invalid (e.g. a second `file` part) is removed.
    const orphan = await stored?.catch(() => undefined);
    if (orphan) await store.client.removeObject(store.bucket, orphan.fileName).catch(() => {});
    // formidable's errors carry a numeric `code` (its FormidableError constants)
    const err = e as { code?: number; httpCode?: number; message?: string };
    if (err.code === formidableErrors.maxFilesExceeded) throw badRequest('invalid_multipart', 'Send exactly one part named "file"', [{ path: '/file', message: 'is sent more than once' }]);
    if (err.code === formidableErrors.maxFieldsExceeded || err.code === formidableErrors.maxFieldsSizeExceeded)
      throw new ApiError(413, 'payload_too_large', `The parts besides "file" exceed the limit of ${MAX_OTHER_PARTS} parts and ${MAX_OTHER_PARTS_BYTES} bytes`);
    if (err.httpCode === 413) throw tooLarge(maxBytes);
    if (err.code === formidableErrors.noEmptyFiles) throw invalidField('/file', 'is empty');
    throw badRequest('invalid_multipart', `Malformed multipart body: ${err.message ?? 'could not be parsed'}`);
  }
  if (!stored) throw invalidField('/file', 'is required: send one multipart part named "file"');
  return await stored;
}

type UploadInput = RouteInput<unknown, unknown, { chunk?: boolean }>;

/** An upload route's work: store the part, honour its `Idempotency-Key`, record it. */
export async function uploadFile(kind: FileKind, { ctx, query, auth, deps, em, claimIdempotency }: UploadInput): Promise<RouteResult> {
  const chunk = query.chunk === true;
  const o = await receiveUpload(ctx, deps.storage, auth.workspaceId, kind, chunk);
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
}

/** An assembly route's work: check the chunks, then run the assembly workflow for a file of `kind`. */
export async function assembleChunks(kind: FileKind, { ctx, body, auth, deps, em }: RouteInput<AssembleChunksBody, unknown, unknown>): Promise<MediaObjectJson> {
  const chunks = body.chunks;
  // A chunk that is not there is a 404 first: the order and size rules below are about real chunks.
  const names = chunks.map((c) => c.fileName);
  const sizeOf = await chunkSizes(em, names);
  chunks.forEach((c, i) => {
    if (!sizeOf.has(c.fileName)) throw notFoundField(`/chunks/${i}/fileName`, NOT_A_CHUNK);
  });
  chunks.forEach((c, i) => {
    const expected = chunks[0]!.chunkNumber + i;
    if (i === 0 && c.chunkNumber > 1) throw invalidField('/chunks/0/chunkNumber', 'must be 0 or 1 (the first chunk)');
    if (c.chunkNumber !== expected) throw invalidField(`/chunks/${i}/chunkNumber`, `must be ${expected}: chunks are listed in order, numbers consecutive`);
  });

  const dup = names.findIndex((n, i) => names.indexOf(n) !== i);
  if (dup >= 0) throw invalidField(`/chunks/${dup}/fileName`, 'is listed twice');
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
  const ext = EXTENSION_ALIASES[kind][wantedExt] ?? wantedExt;
  if (!Object.values(ALLOWED_TYPES[kind]).includes(ext)) throw invalidField('/fileExtension', `must be one of ${extensionsOf(kind).join(', ')}`);
  const args = { workspaceId: auth.workspaceId, chunks: names, ext, kind, id: uuidv7() };
  const o = await runMediaWorkflow(deps, { kind: 'assembly', args, ctx, body });
  return mediaJson(deps.storage, o);
}
