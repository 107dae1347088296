/**
 * The migration job: applies pending database migrations and, with `TEMPORAL_ADDRESS` set, prepares
 * the external Temporal (namespace, search attributes). `node dist/scripts/migrate.js` in the image
 * (the compose `migrate` service, which API and worker wait for); `npx tsx scripts/migrate.ts`
 * from a checkout. `npm start` and the tests do the same themselves.
 */
import { loadConfig, refuseUnsafeProductionSecrets } from '../domain/config.js';
import { openOrm, migrate } from '../db/orm.js';
import { ensureTemporalNamespace } from './temporalSetup.js';

// The webhook-secret migration encrypts with ENCRYPTION_KEY: never with a development key in production.
refuseUnsafeProductionSecrets();
const config = loadConfig();
const orm = await openOrm(config.databaseUrl);
await migrate(orm);
await orm.close(true);
console.log('migrations applied');
if (process.env.TEMPORAL_ADDRESS) {
  const temporal = await ensureTemporalNamespace(config);
  console.log(`temporal namespace ${config.temporal.namespace} ready`, temporal);
}
