/**
 * What this application needs in an external Temporal (the dev server `npm start` runs has both
 * already): its namespace, registered with 7 days of retention if missing, and the search
 * attributes of `domain/searchAttributes.ts`. Run by `npm start` and by the migration job
 * (`scripts/migrate.ts`, the compose `migrate` service) when `TEMPORAL_ADDRESS` names a server.
 */
import { msToTs } from '@temporalio/common/lib/time.js';
import protoPackage from '@temporalio/proto';
import type { Config } from '../domain/config.js';
import { SEARCH_ATTRIBUTES } from '../domain/searchAttributes.js';
import { connectTemporal } from '../infra/temporalConnection.js';

const RETENTION = '7 days';
const GRPC_NOT_FOUND = 5;

export async function ensureTemporalNamespace(config: Config): Promise<{ namespaceCreated: boolean; searchAttributesAdded: string[] }> {
  const connection = await connectTemporal(config);
  const namespace = config.temporal.namespace;
  try {
    let namespaceCreated = false;
    try {
      await connection.workflowService.describeNamespace({ namespace });
    } catch (e) {
      if ((e as { code?: number }).code !== GRPC_NOT_FOUND) throw e;
      await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs(RETENTION) });
      namespaceCreated = true;
    }
    // A namespace just registered reaches every Temporal service within seconds: retry meanwhile.
    for (let attempt = 1; ; attempt++) {
      try {
        const existing = await connection.operatorService.listSearchAttributes({ namespace });
        const missing = SEARCH_ATTRIBUTES.filter((a) => !(a in (existing.customAttributes ?? {})));
        if (missing.length) {
          await connection.operatorService.addSearchAttributes({
            namespace,
            searchAttributes: Object.fromEntries(missing.map((a) => [a, protoPackage.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD])),
          });
        }
        return { namespaceCreated, searchAttributesAdded: missing };
      } catch (e) {
        if (!namespaceCreated || attempt >= 30) throw e;
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  } finally {
    await connection.close();
  }
}
