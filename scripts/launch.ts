/**
 * `node dist/scripts/launch.js api|worker`: how the image, compose, the chart and `npm run
 * start:*` start a process. It picks the Node flags the running Node supports (infra/nodeFlags.ts)
 * and replaces itself with `node <flags> dist/<role>/main.js` (process.execve: same pid, so
 * signals from the orchestrator reach the service directly and no parent process stays behind).
 * Options given to the launcher itself (e.g. `--import tsx` when run from source) are kept.
 */
import { existsSync } from 'node:fs';
import { extname, join } from 'node:path';
import { LAUNCHABLE } from '../infra/nodeFlags.js';

const role = process.argv[2] as keyof typeof LAUNCHABLE | undefined;
if (!role || !Object.hasOwn(LAUNCHABLE, role)) {
  process.stderr.write(`usage: node scripts/launch.js ${Object.keys(LAUNCHABLE).join('|')}\n`);
  process.exit(2);
}
const { entry, flags } = LAUNCHABLE[role];
// Compiled (dist/scripts/launch.js → dist/api/main.js) or from source with tsx (.ts → .ts).
const file = join(import.meta.dirname, '..', entry + extname(import.meta.filename));
if (!existsSync(file)) {
  process.stderr.write(`launch: ${file} not found (run npm run build first)\n`);
  process.exit(2);
}
process.execve!(process.execPath, [process.execPath, ...flags, ...process.execArgv, file, ...process.argv.slice(3)], process.env);
