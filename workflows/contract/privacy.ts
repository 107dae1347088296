/**
 * The privacy jobs (workflows/erasure.ts, workflows/subjectAccess.ts). Their input is the
 * request id only: the identifiers wait, sealed, in the request row, never in a history.
 */
export interface ErasureWorkflowInput {
  requestId: string;
}

export interface SubjectAccessWorkflowInput {
  requestId: string;
}
