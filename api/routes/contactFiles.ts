/**
 * Contacts files: the way CSV and JSON Lines files come in for `contactsFile` of
 * `POST /contacts/{sourceId}/bulk-upsert-contacts`, apart from media for posts (which take media
 * types only). The same streaming upload and chunk assembly as media (api/uploads.ts).
 */
import { CONTACT_FILE_TYPES } from '../../domain/contactFile.js';
import { defineRoute } from '../route.js';
import { assembleChunks, extensionsOf, uploadFile } from '../uploads.js';
import { AssembleChunksBody, MediaObject, UploadQuery } from '../schemas/media.js';

export const contactFileRoutes = [
  defineRoute({
    method: 'post',
    path: '/contact-files',
    tag: 'Contacts',
    summary: 'Upload a contacts file (CSV or JSON Lines)',
    description:
      'multipart/form-data with one part named `file` (≤ 50 MiB; larger files in chunks, see `POST /contact-files/assemble-chunks`), ' +
      `declared as ${Object.keys(CONTACT_FILE_TYPES).join(' or ')} (\`application/csv\`, \`text/x-csv\`, \`application/jsonl\` are read ` +
      'as those) and detected as the same from its bytes: UTF-8 text without control characters; JSON Lines when the first line is a JSON ' +
      'object, CSV when a header line is followed by a record of as many fields. Else 400 `file_type_not_allowed` or `file_type_mismatch`. ' +
      'Send the `fileName` returned as `contactsFile.fileName` of `POST /contacts/{sourceId}/bulk-upsert-contacts`. With `?chunk=true` ' +
      'the part is stored as one chunk (≤ 10 MiB, declared as a contacts file type or `application/octet-stream`). `Idempotency-Key` ' +
      'binds to the query and the SHA-256 of the file, as for media uploads.',
    contentType: 'multipart/form-data',
    partTypes: Object.keys(CONTACT_FILE_TYPES),
    query: UploadQuery,
    responses: { 200: MediaObject },
    errors: [400, 401, 413, 415, 500], errorCodes: ['invalid_multipart', 'file_type_not_allowed', 'file_type_mismatch'],
    idempotent: true,
    handler: (input) => uploadFile('contactsFile', input),
  }),

  defineRoute({
    method: 'post',
    path: '/contact-files/assemble-chunks',
    tag: 'Contacts',
    summary: 'Assemble uploaded chunks into one contacts file',
    description:
      'Concatenates chunks uploaded with `?chunk=true`, server-side, in `chunkNumber` order (≤ 10 MiB each, all but the last ≥ 5 MiB, ' +
      "result ≤ 1 GiB), on a worker. The result must be a contacts file (detected from the first chunk's bytes: else 400 " +
      `\`file_type_not_allowed\`) matching \`fileExtension\` (${extensionsOf('contactsFile').join(', ')}; else 400 \`file_extension_mismatch\`). ` +
      'The request waits up to `MEDIA_REQUEST_DEADLINE_MS`, then answers 504 `media_deadline_exceeded` while the work goes on (the same ' +
      'request with the same `Idempotency-Key` collects the result).',
    body: AssembleChunksBody,
    bodyLimit: 4 * 1024 * 1024, // up to MAX_CHUNKS file names
    responses: { 200: MediaObject },
    errors: [400, 401, 404, 413, 500, 504], errorCodes: ['file_type_not_allowed', 'file_extension_mismatch', 'media_deadline_exceeded'],
    idempotent: true,
    handler: (input) => assembleChunks('contactsFile', input),
  }),
];
