/** Applies pending migrations: `npx tsx scripts/migrate.ts` (npm start and tests do it themselves). */
import { loadConfig } from '../domain/config.js';
import { openOrm, migrate } from '../db/orm.js';

const orm = await openOrm(loadConfig().databaseUrl);
await migrate(orm);
await orm.close(true);
console.log('migrations applied');
