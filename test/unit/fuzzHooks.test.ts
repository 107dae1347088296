/**
 * scripts/fuzz_hooks.py under the Python of the schemathesis install (`.tools/schemathesis`, put
 * there by the bootstrap that `npm test` runs first).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../domain/config.js';
import { SCHEMATHESIS } from '../../scripts/fuzz.js';

describe('fuzz hooks', () => {
  // `npm run fuzz` fuzzes with two threads. On CPython 3.11 `ast.parse` then at times raises
  // "SystemError: AST constructor recursion depth mismatch" (python/cpython#106905) while
  // Hypothesis describes a filter lambda for a strategy's repr, and schemathesis reported a Runtime
  // Error for the operation being generated (seeds 2477019275 and 1070447578, a coverage-phase
  // lambda of its own). With the hooks loaded that description falls back to `<unknown>`.
  it('keep a strategy usable when ast.parse raises the spurious SystemError', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fuzz-hooks-'));
    try {
      // A file, not `python -c`: Hypothesis only parses a lambda whose source it can read.
      const script = join(dir, 'describe_lambda.py');
      writeFileSync(
        script,
        [
          'import ast, runpy',
          `runpy.run_path(${JSON.stringify(join(ROOT_DIR, 'scripts', 'fuzz_hooks.py'))})`,
          'def spurious(*args, **kwargs):',
          '    raise SystemError("AST constructor recursion depth mismatch (before=66, after=91)")',
          'ast.parse = spurious',
          'from hypothesis import strategies as st',
          'strategy = st.integers().filter(lambda x: x > 7)',
          'print(repr(strategy))',
          'print(strategy.example() > 7)',
        ].join('\n'),
      );
      const r = spawnSync(join(SCHEMATHESIS, '..', 'python'), [script], { encoding: 'utf8' });
      expect(r.stderr).not.toMatch(/SystemError/);
      expect(r.status).toBe(0);
      expect(r.stdout).toBe('integers().filter(lambda x: <unknown>)\nTrue\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
