/** The contacts bulk upsert job (workflows/bulkUpsert.ts): what its caller gives. */
import type { ContactFileFormat } from '../../domain/contactFile.js';

/** Rows come from a contacts file, staged segment by segment while earlier rows are ingested. */
export interface ContactFileRef {
  fileName: string;
  format: ContactFileFormat;
  sizeBytes: number;
}

/** The start of a bulk upsert; the workflow adds its continue-as-new state (`BulkUpsertInput`). */
export interface BulkUpsertArgs {
  sourceId: string;
  batchId: string;
  /** Rows of an inline request (0 for a file: its rows are counted while it is read). */
  totalRows: number;
  file?: ContactFileRef;
  chunkSize?: number;
  /** Chunks one run processes before it continues as new (default CHUNKS_PER_RUN). */
  chunksPerRun?: number;
}
