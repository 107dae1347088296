/** Media workflows (workflows/mediaImport.ts, mediaAssembly.ts, mediaRetention.ts): inputs and type names. */
import type { FileKind } from '../../db/media.js';

export interface ImportMediaInput {
  workspaceId: string;
  url: string;
  /** Id of the media row and object to create (chosen by the API, the same on every attempt). */
  id: string;
}

export interface AssembleMediaInput {
  workspaceId: string;
  /** Chunk file names in order (checked by the API: the workspace's chunks, sizes within the limits). */
  chunks: string[];
  /** Extension of the result, normalised (`mp4`, `jpg` …). */
  ext: string;
  /** Which types the result may be (absent in histories from before contacts files had their own way in: media). */
  kind?: FileKind;
  /** Id of the media row and object to create (chosen by the API, the same on every attempt). */
  id: string;
}

/** Workflow type names (recorded in histories and schedules: never rename). */
export const MEDIA_WORKFLOWS = { import: 'mediaImportWorkflow', assembly: 'mediaAssemblyWorkflow', retention: 'mediaRetentionWorkflow' } as const;
