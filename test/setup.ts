/** Runs in every test process before its test file. */
import { DefaultLogger, Runtime } from '@temporalio/worker';

// The SDK logs every worker state change at INFO; tests only want its warnings.
try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  /* already installed in this process */
}
