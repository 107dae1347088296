/**
 * The request id travels with the work a request starts: as a Temporal header of the workflow
 * start (telemetry/correlation.ts, on every client the project creates), carried by the workflow
 * to its activities, child workflows and next runs (workflows/interceptors.ts), and put into the
 * log context of each activity (worker/telemetry.ts), so every worker log line of that work names
 * the request. A header, not a workflow argument: recorded inputs stay as they were, and replay
 * does not compare headers.
 */
export const REQUEST_ID_HEADER = 'request-id';
