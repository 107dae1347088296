/**
 * Second step of `npm run build`: bundles the compiled workflow code once into
 * `dist/workflow-bundle.js`, which the compiled worker loads at start (no bundler run, no source
 * files needed in the image). Run from `dist/` only: `node dist/scripts/bundleWorkflows.js`.
 */
import { writeFileSync } from 'node:fs';
import { bundleWorkflowCode } from '@temporalio/worker';
import { FAILURE_CONVERTER_PATH } from '../domain/payloadCodec.js';
import { BUILT_WORKFLOW_BUNDLE, RUNNING_COMPILED, WORKFLOW_INTERCEPTOR_MODULES, WORKFLOWS_PATH } from '../worker/worker.js';

if (!RUNNING_COMPILED) throw new Error('run the compiled script: npm run build');
const { code } = await bundleWorkflowCode({
  workflowsPath: WORKFLOWS_PATH,
  workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
  failureConverterPath: FAILURE_CONVERTER_PATH,
  logger: { trace() {}, debug() {}, info() {}, log() {}, warn: (m) => console.warn(m), error: (m) => console.error(m) },
});
writeFileSync(BUILT_WORKFLOW_BUNDLE, code);
console.log(`workflow bundle: ${BUILT_WORKFLOW_BUNDLE} (${(code.length / 1024).toFixed(0)} KiB)`);
