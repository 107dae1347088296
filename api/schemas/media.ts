/** Uploads (media and contacts files), chunk assembly and media import: request and response shapes. */
import { Type, type Static } from '@sinclair/typebox';
import { MAX_CHUNKS, MEDIA_TYPES } from '../../domain/social.js';
import { CONTACT_FILE_TYPES } from '../../domain/contactFile.js';

const allowed = [...Object.keys(MEDIA_TYPES), ...Object.keys(CONTACT_FILE_TYPES)].join(', ');

export const MediaObject = Type.Object(
  {
    fileName: Type.String({
      description: 'Storage path `<workspaceId>/<id>.<ext>`; reference a media file in post `media[]` / `articles[]`, a contacts file in `contactsFile.fileName` of a bulk upsert',
    }),
    fileSizeInBytes: Type.Integer(),
    contentType: Type.String({ description: `Detected from the bytes: ${allowed} (\`application/octet-stream\` for an unassembled chunk)` }),
    readUrl: Type.String({ format: 'uri', description: 'Presigned GET URL, valid for 15 minutes' }),
  },
  {},
);
export type MediaObjectJson = Static<typeof MediaObject>;

export const UploadQuery = Type.Object(
  {
    chunk: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'Store the part as one chunk of a chunked upload (≤ 10 MiB, not type-checked until assembly; every chunk but the last ≥ 5 MiB)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const AssembleChunksBody = Type.Object(
  {
    chunks: Type.Array(
      Type.Object(
        {
          fileName: Type.String({ minLength: 1, maxLength: 300, description: 'A `fileName` returned by an upload with `?chunk=true` (`POST /v1/media/upload` or `POST /contact-files`)' }),
          chunkNumber: Type.Integer({ minimum: 0, maximum: MAX_CHUNKS }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_CHUNKS, description: 'In order; chunk numbers consecutive' },
    ),
    fileExtension: Type.String({ maxLength: 11, examples: ['mp4'], pattern: '^\\.?[A-Za-z0-9]{1,10}$', description: 'Extension of the assembled file, e.g. `mp4`; must match its detected type' }),
  },
  { additionalProperties: false },
);
export type AssembleChunksBody = Static<typeof AssembleChunksBody>;

export const ImportFromUrlBody = Type.Object(
  { url: Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048, description: 'Public http(s) URL; ≤ 50 MiB, fetched within 60 s' }) },
  { additionalProperties: false },
);
export type ImportFromUrlBody = Static<typeof ImportFromUrlBody>;
