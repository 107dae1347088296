/**
 * The Temporal failure converter of every client, worker and workflow bundle (named by
 * `FAILURE_CONVERTER_PATH`, domain/payloadCodec.ts): a failure's message and stack trace travel as
 * an encoded attribute payload, which the payload codec seals like any other, so histories never
 * hold them in clear ("Encoded failure" is what Temporal stores as the message).
 * Loaded by path (Temporal `require`s it, and bundles it into the workflow code): no local imports.
 */
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
