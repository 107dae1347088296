/**
 * Media for posts: multipart upload streamed into the object store (declared type and bytes both
 * checked), server-side assembly of chunks uploaded separately (api/uploads.ts, shared with
 * contacts files), and import from a public URL through the outbound URL guard. Assembly and import run as workflows on the worker (api/mediaWorkflows.ts); the
 * route waits for their result. Every answer is a media object with a presigned `readUrl` (15 minutes).
 */
import { MEDIA_TYPES } from '../../domain/social.js';
import { runMediaWorkflow } from '../mediaWorkflows.js';
import { defineRoute } from '../route.js';
import { assembleChunks, extensionsOf, mediaJson, uploadFile } from '../uploads.js';
import { AssembleChunksBody, ImportFromUrlBody, MediaObject, UploadQuery } from '../schemas/media.js';
import { v7 as uuidv7 } from 'uuid';

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
      'multipart/form-data with one part named `file` (≤ 50 MiB) of a media type: ' +
      `${Object.keys(MEDIA_TYPES).join(', ')}. Both the part's declared \`Content-Type\` and the type detected from its bytes must be one ` +
      'of them (else 400 `file_type_not_allowed`), and the same one (else 400 `file_type_mismatch`); `image/jpg` is read as `image/jpeg`. ' +
      'Contacts files (CSV, JSON Lines) go through `POST /contact-files`. With `?chunk=true` the part ' +
      'is stored as one chunk (≤ 10 MiB, declared as a media type or `application/octet-stream`) for `POST /v1/media/assemble-chunks`. ' +
      '`Idempotency-Key` binds to the query and the SHA-256 of the ' +
      "file's bytes (not the multipart framing, whose boundary differs per request): the same key and file within 24 h replays the " +
      'first response (same `fileName`; its `readUrl` may have expired) and stores nothing new; the same key with another file is 422.',
    contentType: 'multipart/form-data',
    partTypes: Object.keys(MEDIA_TYPES),
    query: UploadQuery,
    responses: { 200: MediaObject },
    errors: [400, 401, 413, 415, 500], errorCodes: ['invalid_multipart', 'file_type_not_allowed', 'file_type_mismatch'],
    idempotent: true,
    handler: (input) => uploadFile('media', input),
  }),

  defineRoute({
    method: 'post',
    path: '/v1/media/assemble-chunks',
    tag: 'Social publishing',
    summary: 'Assemble uploaded chunks into one media file',
    description:
      'Concatenates chunks uploaded with `POST /v1/media/upload?chunk=true`, server-side, in `chunkNumber` order. Chunks ≤ 10 MiB, ' +
      "all but the last ≥ 5 MiB, result ≤ 1 GiB. The result must be a media type (detected from the first chunk's bytes, as for uploads: " +
      `else 400 \`file_type_not_allowed\`) matching \`fileExtension\` (${extensionsOf('media').join(', ')}; else 400 ` +
      '`file_extension_mismatch`); the chunks are consumed: of concurrent requests for the same chunks one assembles them, the others ' +
      'get 400 `validation_failed` (not a chunk of this workspace).' +
      DEADLINE_NOTE,
    body: AssembleChunksBody,
    bodyLimit: 4 * 1024 * 1024, // up to MAX_CHUNKS file names
    responses: { 200: MediaObject },
    errors: [400, 401, 404, 413, 500, 504], errorCodes: ['file_type_not_allowed', 'file_extension_mismatch', 'media_deadline_exceeded'],
    idempotent: true,
    handler: (input) => assembleChunks('media', input),
  }),

  defineRoute({
    method: 'post',
    path: '/v1/media/import-from-url',
    tag: 'Social publishing',
    summary: 'Import a media file from a public URL',
    description:
      'Downloads the URL (public addresses only, checked after DNS and on each redirect; ≤ 50 MiB within 60 s) into workspace storage. ' +
      'The type is detected from the bytes and must be a media type, as for uploads.' + DEADLINE_NOTE,
    body: ImportFromUrlBody,
    responses: { 200: MediaObject },
    errors: [400, 401, 413, 500, 504], errorCodes: ['url_not_allowed', 'import_failed', 'file_type_not_allowed', 'file_extension_mismatch', 'media_deadline_exceeded'],
    idempotent: true,
    handler: async ({ ctx, body, auth, deps }) => {
      const args = { workspaceId: auth.workspaceId, url: body.url, id: uuidv7() };
      const o = await runMediaWorkflow(deps, { kind: 'import', args, ctx, body });
      return mediaJson(deps.storage, o);
    },
  }),
];

