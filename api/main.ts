/** The API process: `npm run api`. Stateless; run as many as the load needs. */
import { loadConfig } from '../domain/config.js';
import { startApiServer } from './server.js';

const api = await startApiServer(loadConfig());
api.deps.log.info({ url: api.url }, 'api listening');
process.send?.('ready');
const stop = async () => {
  await api.close();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
process.once('disconnect', stop);
