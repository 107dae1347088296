/**
 * Media objects in the object store. Every object's type is decided by its bytes (magic numbers
 * via `file-type`, else the text check of `sniffContactFile` for CSV / JSON Lines contacts files),
 * never by what the client declared; only the types of `UPLOAD_TYPES` are kept. Contacts files
 * are for `bulk-upsert-contacts` (`contactsFile`), not for posts.
 * Object names are `<workspaceId>/<uuidv7>.<ext>` and equal the `fileName` clients reference.
 * Chunks of a chunked upload are stored untyped (`.part`) and only become media once assembled.
 */
import { createHash } from 'node:crypto';
import { PassThrough, Transform, type Readable, type TransformCallback } from 'node:stream';
import { fileTypeFromBuffer } from 'file-type';
import { CopyDestinationOptions, CopySourceOptions } from 'minio';
import { v7 as uuidv7 } from 'uuid';
import { LockMode, type EntityManager, type InferKyselyDB } from '@mikro-orm/postgresql';
import { DomainError, InvalidInputError, TooLargeError, TypeMismatchError, UnsupportedMediaTypeError, type InputField } from '../domain/errors.js';
import { MEDIA_TYPES } from '../domain/social.js';
import { CONTACT_FILE_TYPES, sniffContactFile } from '../domain/contactFile.js';
import type { ObjectStore } from '../infra/objectStore.js';
import type { Queryable } from './pool.js';
import { MediaObject, Post } from './social.js';
import { runQuery, textArray, typedQueries } from './sqlFragments.js';
import { acrossWorkspaces, assertWorkspaceScope } from './tenancy.js';

/**
 * The two kinds of upload, each with its own way in: media for posts (`/v1/media/…`) and contacts
 * files for bulk upserts (`/contact-files…`). Each takes only its own types (type → extension).
 */
export type FileKind = 'media' | 'contactsFile';
export const ALLOWED_TYPES: Readonly<Record<FileKind, Readonly<Record<string, string>>>> = { media: MEDIA_TYPES, contactsFile: CONTACT_FILE_TYPES };
/** Every stored type's extension. */
export const UPLOAD_TYPES: Readonly<Record<string, string>> = { ...MEDIA_TYPES, ...CONTACT_FILE_TYPES };
/** Declared part types that name an allowed type under another spelling. */
const DECLARED_ALIASES: Readonly<Record<string, string>> = {
  'image/jpg': 'image/jpeg',
  'image/pjpeg': 'image/jpeg',
  'application/csv': 'text/csv',
  'text/x-csv': 'text/csv',
  'application/jsonl': 'application/x-ndjson',
  'application/x-jsonlines': 'application/x-ndjson',
  'application/jsonlines': 'application/x-ndjson',
};
/** What a chunk of a chunked upload may declare: a piece of a file has no type of its own. */
const CHUNK_DECLARED = 'application/octet-stream';

/**
 * The allowed type a multipart part declares (its `Content-Type`, parameters and case ignored),
 * or a 400 `file_type_not_allowed`: the contract refuses a part whose MIME type is not an
 * allowed upload type, whatever its bytes. A chunk may also declare `application/octet-stream`.
 */
export function declaredType(declared: string | null | undefined, kind: FileKind, chunk: boolean, field: InputField = ['file']): string {
  const bare = (declared ?? '').split(';')[0]!.trim().toLowerCase();
  const type = DECLARED_ALIASES[bare] ?? bare;
  if (ALLOWED_TYPES[kind][type] || (chunk && type === CHUNK_DECLARED)) return type;
  throw new UnsupportedMediaTypeError(field, undefined, Object.keys(ALLOWED_TYPES[kind]), declared ? `the part declares ${bare}` : 'the part declares no type');
}

/** Bytes file-type needs to recognise every supported format. */
const SNIFF_BYTES = 4100;
export const CHUNK_CONTENT_TYPE = 'application/octet-stream';

export interface StoredObject {
  /** The `media_objects` row id, also the object name's id part. */
  id: string;
  fileName: string;
  contentType: string;
  sizeBytes: number;
  /** Of streamed uploads: SHA-256 of the file's bytes (what an upload's `Idempotency-Key` is bound to). */
  sha256?: string;
}

/** What the media workflows answer. */
export type StoredMedia = Omit<StoredObject, 'sha256'>;

const unsupportedType = (kind: FileKind, detected: string | undefined, field: InputField) => new UnsupportedMediaTypeError(field, detected, Object.keys(ALLOWED_TYPES[kind]));

export const tooLarge = (maxBytes: number, what = 'File') => new TooLargeError(maxBytes, what);

/**
 * The MIME type of these leading bytes (the whole file when shorter than SNIFF_BYTES) if `kind`
 * allows it, else a 400 naming what was detected: binary formats by their magic numbers, contacts
 * files by the text check.
 */
export async function detectFileType(head: Uint8Array, kind: FileKind, field: InputField = ['file']): Promise<string> {
  const ft = await fileTypeFromBuffer(head);
  const type = ft ? ft.mime : sniffContactFile(head, head.length < SNIFF_BYTES);
  if (!type || !ALLOWED_TYPES[kind][type]) throw unsupportedType(kind, type ?? undefined, field);
  return type;
}

/**
 * Passes bytes through once the type of the first `SNIFF_BYTES` is known and allowed; errors
 * with a 400 for a type not allowed and with a 413 once more than `maxBytes` went through.
 */
class Sniffer extends Transform {
  private head: Buffer[] = [];
  private headLength = 0;
  private total = 0;
  private readonly hash = createHash('sha256');
  private decided = false;
  readonly type: Promise<string>;
  private settle!: { resolve: (t: string) => void; reject: (e: unknown) => void };

  constructor(
    private readonly maxBytes: number,
    /** Decides the type from the leading bytes (or refuses them). */
    private readonly typeOf: (head: Buffer) => Promise<string>,
    private readonly field: InputField,
  ) {
    super();
    this.type = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    this.type.catch(() => {});
    this.on('error', (e) => this.settle.reject(e));
    this.on('close', () => this.settle.reject(new Error('upload stream closed before its type was known')));
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.total += chunk.length;
    this.hash.update(chunk);
    if (this.total > this.maxBytes) return this.fail(tooLarge(this.maxBytes), cb);
    if (this.decided) return cb(null, chunk);
    this.head.push(chunk);
    this.headLength += chunk.length;
    if (this.headLength >= SNIFF_BYTES) this.decide(cb);
    else cb();
  }

  override _flush(cb: TransformCallback): void {
    if (this.decided) return cb();
    if (this.headLength === 0) return this.fail(new InvalidInputError(this.field, 'is empty'), cb);
    this.decide(cb);
  }

  private decide(cb: TransformCallback): void {
    const head = Buffer.concat(this.head);
    this.head = [];
    this.typeOf(head).then(
      (type) => {
        this.decided = true;
        this.settle.resolve(type);
        cb(null, head);
      },
      (e) => this.fail(e, cb),
    );
  }

  private fail(e: unknown, cb: TransformCallback): void {
    this.settle.reject(e);
    cb(e as Error);
  }

  get bytes(): number {
    return this.total;
  }

  /** SHA-256 of the bytes seen (the whole file once the stream ended). */
  get sha256(): string {
    return this.hash.digest('hex');
  }
}

export interface StoreOptions {
  workspaceId: string;
  maxBytes: number;
  /** Which types the bytes may be (media for posts, or a contacts file). */
  kind: FileKind;
  /** The type the client declared (checked with `declaredType`): the bytes must be of that type. */
  declared?: string;
  /** Store as an untyped chunk of a chunked upload. */
  chunk?: boolean;
  /** The input field errors name (default `file`). */
  field?: InputField;
  /** Row and object id (default: a new UUIDv7); an activity passes the same one on every attempt. */
  id?: string;
}

/**
 * Streams `source` into the store under a new name once its type is known. Rejects (and leaves
 * nothing behind) for a type not allowed or a body over `maxBytes`; the caller drains `source`.
 */
export async function storeStream(store: ObjectStore, source: Readable, opts: StoreOptions): Promise<StoredObject> {
  const field = opts.field ?? ['file'];
  const typeOf = async (head: Buffer) => {
    if (opts.chunk) return CHUNK_CONTENT_TYPE;
    const type = await detectFileType(head, opts.kind, field);
    if (opts.declared && opts.declared !== type) throw new TypeMismatchError(field, opts.declared, type);
    return type;
  };
  const sniffer = new Sniffer(opts.maxBytes, typeOf, field);
  source.on('error', (e) => sniffer.destroy(e));
  // A source torn down before its end (client gone, multipart limit hit) must not leave the upload waiting.
  source.on('close', () => {
    if (!source.readableEnded && !sniffer.destroyed) sniffer.destroy(new Error('upload aborted before the end of the file'));
  });
  source.pipe(sniffer);
  const type = await sniffer.type;
  const id = opts.id ?? uuidv7();
  const fileName = objectName(opts.workspaceId, opts.chunk ? 'part' : UPLOAD_TYPES[type]!, id);
  const body = new PassThrough();
  // The MinIO client does not watch its input for errors: a failed source must fail the upload here.
  const failed = new Promise<never>((_, reject) => {
    sniffer.on('error', reject);
    body.on('error', reject);
  });
  failed.catch(() => {});
  sniffer.on('error', (e) => body.destroy(e));
  sniffer.pipe(body);
  try {
    await Promise.race([store.client.putObject(store.bucket, fileName, body, undefined, { 'Content-Type': type }), failed]);
  } catch (e) {
    await store.client.removeIncompleteUpload(store.bucket, fileName).catch(() => {});
    await store.client.removeObject(store.bucket, fileName).catch(() => {});
    throw sniffer.errored instanceof DomainError ? sniffer.errored : e;
  }
  return { id, fileName, contentType: type, sizeBytes: sniffer.bytes, sha256: sniffer.sha256 };
}

/** Stores a body already in memory (imports); the same `id` stores under the same name again. */
export async function storeBuffer(store: ObjectStore, body: Buffer, opts: StoreOptions): Promise<StoredObject> {
  if (body.length > opts.maxBytes) throw tooLarge(opts.maxBytes);
  if (body.length === 0) throw new InvalidInputError(opts.field ?? ['file'], 'is empty');
  const type = await detectFileType(body.subarray(0, SNIFF_BYTES), opts.kind, opts.field);
  const id = opts.id ?? uuidv7();
  const fileName = objectName(opts.workspaceId, UPLOAD_TYPES[type]!, id);
  await store.client.putObject(store.bucket, fileName, body, body.length, { 'Content-Type': type });
  return { id, fileName, contentType: type, sizeBytes: body.length };
}

export function objectName(workspaceId: string, ext: string, id: string = uuidv7()): string {
  return `${workspaceId}/${id}.${ext}`;
}

/** Reads the leading bytes of a stored object. */
export async function readHead(store: ObjectStore, fileName: string, bytes = SNIFF_BYTES): Promise<Buffer> {
  const stream = await store.client.getPartialObject(store.bucket, fileName, 0, bytes);
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

/**
 * Server-side concatenation of `sources` (in order) into `fileName` with `contentType`.
 * Every source but the last must be ≥ 5 MiB (S3 multipart copy); callers check that first.
 */
export async function composeObjects(store: ObjectStore, sources: string[], fileName: string, contentType: string, expectedBytes: number): Promise<void> {
  await store.client.composeObject(
    new CopyDestinationOptions({ Bucket: store.bucket, Object: fileName, MetadataDirective: 'REPLACE', Headers: { 'Content-Type': contentType } }),
    sources.map((s) => new CopySourceOptions({ Bucket: store.bucket, Object: s })),
  );
  // composeObject reports a failed multipart copy by aborting quietly: check the result.
  const stat = await store.client.statObject(store.bucket, fileName).catch(() => undefined);
  if (!stat || stat.size !== expectedBytes) {
    await store.client.removeObject(store.bucket, fileName).catch(() => {});
    throw new Error(`composing ${sources.length} chunks into ${fileName} failed (got ${stat?.size ?? 'no object'}, expected ${expectedBytes} bytes)`);
  }
}

export async function recordMedia(em: EntityManager, workspaceId: string, o: StoredObject, isChunk = false): Promise<void> {
  em.create(MediaObject, { id: o.id, workspaceId, fileName: o.fileName, contentType: o.contentType, sizeBytes: o.sizeBytes, isChunk, createdAt: new Date() });
  await em.flush();
}

/** The media row `id` of the context's workspace (an activity's earlier attempt may have stored it). */
export async function findMedia(em: EntityManager, id: string): Promise<StoredObject | null> {
  const m = await em.findOne(MediaObject, { id });
  return m && { id: m.id, fileName: m.fileName, contentType: m.contentType, sizeBytes: m.sizeBytes };
}

// unknownMedia, mediaContentTypes and mediaToPublish run on the pg client (runQuery): their callers (the
// posts and bulk-schedule routes, the publish activity) pass a pg pool or transaction client.
const media = typedQueries<InferKyselyDB<typeof MediaObject>>();

/**
 * Which of `fileNames` are not usable media of the workspace (missing, foreign, an unassembled
 * chunk, or a contacts file). Returns the set of unknown names.
 */
export async function unknownMedia(db: Queryable, workspaceId: string, fileNames: string[]): Promise<Set<string>> {
  const unique = [...new Set(fileNames)];
  if (unique.length === 0) return new Set();
  assertWorkspaceScope(workspaceId);
  const rows = await runQuery(
    db,
    media
      .selectFrom('media_objects')
      .select('file_name')
      .where((eb) =>
        eb.and([eb('file_name', '=', eb.fn.any(textArray(unique))), eb.not(eb.ref('is_chunk')), eb('content_type', '<>', eb.fn<string>('all', [textArray(Object.keys(CONTACT_FILE_TYPES))]))]),
      ),
  );
  const known = new Set(rows.map((x) => x.file_name));
  return new Set(unique.filter((f) => !known.has(f)));
}

export const NOT_A_CHUNK = 'is not a chunk uploaded by this workspace (upload it with ?chunk=true)';

/** Sizes of the context workspace's unassembled chunks among `fileNames` (file name → bytes); names that are no such chunk are absent. */
export async function chunkSizes(em: EntityManager, fileNames: string[], lockMode?: LockMode.PESSIMISTIC_PARTIAL_WRITE): Promise<Map<string, number>> {
  const rows = await em.find(MediaObject, { fileName: { $in: fileNames }, isChunk: true }, { fields: ['fileName', 'sizeBytes'], lockMode });
  return new Map(rows.map((x) => [x.fileName, x.sizeBytes]));
}

/**
 * Claims the context workspace's unassembled chunks among `fileNames` for an assembly: their rows
 * are locked (`for update skip locked`) in the caller's transaction (`em.transactional`) until it
 * commits (with the rows deleted: consumed) or rolls back (the chunks stay, as before the attempt).
 * A chunk another assembly holds is skipped, so it is absent like one already consumed: of
 * concurrent assemblies of the same chunks only one gets them all. File name → bytes.
 */
export const claimChunks = (tx: EntityManager, fileNames: string[]): Promise<Map<string, number>> => chunkSizes(tx, fileNames, LockMode.PESSIMISTIC_PARTIAL_WRITE);

/** Removes the rows of consumed chunks (their objects are removed from the store by the caller). */
export async function deleteChunkRecords(em: EntityManager, fileNames: string[]): Promise<void> {
  await em.nativeDelete(MediaObject, { fileName: { $in: fileNames }, isChunk: true });
}

/** The content type of each of `fileNames` that is a media object of the workspace. */
export async function mediaContentTypes(db: Queryable, workspaceId: string, fileNames: string[]): Promise<Map<string, string>> {
  if (!fileNames.length) return new Map();
  assertWorkspaceScope(workspaceId);
  const rows = await runQuery(
    db,
    media
      .selectFrom('media_objects')
      .select(['file_name', 'content_type'])
      .where((eb) => eb('file_name', '=', eb.fn.any(textArray(fileNames)))),
  );
  return new Map(rows.map((m) => [m.file_name, m.content_type]));
}

/** The stored media (not chunks) of the workspace among `fileNames`, for a publish step to upload. */
export async function mediaToPublish(db: Queryable, workspaceId: string, fileNames: string[]): Promise<Map<string, { contentType: string; sizeBytes: number }>> {
  assertWorkspaceScope(workspaceId);
  const rows = await runQuery(
    db,
    media
      .selectFrom('media_objects')
      .select(['file_name', 'content_type', 'size_bytes'])
      .where((eb) => eb.and([eb('file_name', '=', eb.fn.any(textArray(fileNames))), eb.not(eb.ref('is_chunk'))])),
  );
  return new Map(rows.map((m) => [m.file_name, { contentType: m.content_type, sizeBytes: m.size_bytes }]));
}

export interface ExpiredMediaCounts {
  chunks: number;
  uploads: number;
}

const RETENTION_BATCH = 500;

/**
 * Retention (`mediaRetentionWorkflow`): removes, in every workspace, chunks never assembled and
 * uploads no post references (in `media`, `articles` or a thread item's `media`) once they are
 * older than `retentionHours`: object first, row in the same transaction, so a failed removal
 * leaves the row for the next run. Rows are taken `for update skip locked`, so two sweeps never
 * take the same batch. Contacts files are uploads too: no table references them (a bulk upsert
 * reads its file while it runs), so they go after the same period.
 */
export async function removeExpiredMedia(
  em: EntityManager,
  store: ObjectStore,
  opts: { retentionHours: number; onBatch?: (counts: ExpiredMediaCounts) => void },
): Promise<ExpiredMediaCounts> {
  const counts: ExpiredMediaCounts = { chunks: 0, uploads: 0 };
  for (;;) {
    const batch = await em.transactional(async (tx) => {
      const rows = await expiredMediaBatch(tx, opts.retentionHours);
      if (!rows.length) return rows;
      const failed = new Set((await store.client.removeObjects(store.bucket, rows.map((r) => r.fileName))).map(failedKey));
      const removed = rows.filter((r) => !failed.has(r.fileName));
      await tx.nativeDelete(MediaObject, { id: { $in: removed.map((r) => r.id) } }, acrossWorkspaces);
      return removed;
    });
    for (const r of batch) counts[r.isChunk ? 'chunks' : 'uploads']++;
    opts.onBatch?.(counts);
    if (batch.length < RETENTION_BATCH) return counts;
  }
}

/** An entry of `removeObjects`' answer that reports a failure (a missing object is no failure in S3). */
const failedKey = (r: { Error?: { Key?: string } } | null | undefined): string | undefined => r?.Error?.Key;

/** The oldest expired, unreferenced media rows, locked (Kysely, typed from the entities: the reference test is jsonb containment in a `not exists`). */
async function expiredMediaBatch(tx: EntityManager, retentionHours: number): Promise<Array<{ id: string; fileName: string; isChunk: boolean }>> {
  const cutoff = new Date(Date.now() - retentionHours * 3_600_000);
  const rows = await tx
    .getKysely<InferKyselyDB<typeof MediaObject | typeof Post>>()
    .selectFrom('media_objects as m')
    .select(['m.id', 'm.file_name', 'm.is_chunk'])
    .where('m.created_at', '<', cutoff)
    .where((eb) => {
      // `[{"fileName": m.file_name}]`, compared with jsonb columns of other element types (`@>`).
      const asRef = eb.fn('jsonb_build_array', [eb.fn('jsonb_build_object', [eb.cast(eb.val('fileName'), 'text'), eb.ref('m.file_name')])]).$castTo<any>();
      const referenced = eb.exists(
        eb
          .selectFrom('posts as p')
          .select(eb.lit(1).as('one'))
          .whereRef('p.workspace_id', '=', 'm.workspace_id')
          .where((p) =>
            p.or([
              p('p.media', '@>', asRef),
              p('p.articles', '@>', asRef),
              p('p.thread_items', '@>', p.fn('jsonb_build_array', [p.fn('jsonb_build_object', [p.cast(p.val('media'), 'text'), asRef])]).$castTo<any>()),
            ]),
          ),
      );
      return eb.or([eb('m.is_chunk', '=', true), eb.not(referenced)]);
    })
    .orderBy('m.created_at')
    .limit(RETENTION_BATCH)
    .forUpdate()
    .skipLocked()
    .execute();
  return rows.map((r) => ({ id: r.id, fileName: r.file_name, isChunk: r.is_chunk }));
}
