/**
 * Runs schemathesis (installed by `scripts/bootstrap.mjs` into `.tools/schemathesis`) against a
 * running API, as two workspaces: `owner` does the fuzzing, `peer` is the second identity its
 * `object_level_authorization` check replays the owner's reads with.
 *
 * Used by `test/integration/fuzz.test.ts` (fixed seed, bounded, inside `npm test`) and by
 * `npm run fuzz` (this file run directly: a longer campaign with a random seed, through the same
 * test so it gets the same real stack, worker process and crash check).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT_DIR } from '../domain/config.js';

export const SCHEMATHESIS = join(ROOT_DIR, '.tools', 'schemathesis', 'bin', 'st');
/** Python hooks schemathesis loads: a fresh `Idempotency-Key` per valid case (see the file). */
const HOOKS = join(ROOT_DIR, 'scripts', 'fuzz_hooks.py');

export interface FuzzOptions {
  /** Base URL of the API; the document is read from `${baseUrl}/openapi.json`. */
  baseUrl: string;
  ownerKey: string;
  peerKey: string;
  seed: number;
  /** Test cases per operation and phase. */
  maxExamples: number;
  phases?: string[];
  workers?: number;
  /** Time budget in seconds for the whole run (fuzzing and stateful phases repeat until spent). */
  maxTime?: number;
  /** Where the config, auth file and reports go (emptied first). */
  workDir: string;
  /** Streams schemathesis' own output to this process' stderr. */
  echo?: boolean;
  /** Only these checks (a focused run, e.g. `FUZZ_CHECKS=positive_data_acceptance`); default: all. */
  checks?: string[];
  /** Only operations whose path matches this regular expression (`FUZZ_PATHS`, a focused run). */
  pathRegex?: string;
}

export interface FuzzResult {
  exitCode: number;
  /** Test cases schemathesis generated and sent (its own count, from the JUnit report). */
  cases: number;
  /** One line per failure: operation, check and schemathesis' message. */
  findings: string[];
  /** schemathesis' console output (its summary lists every failure with a curl reproduction). */
  output: string;
}

/**
 * Every check schemathesis has, `positive_data_acceptance` included (issue 27 item 21: what the
 * document calls valid, the server accepts; seed 12345 went from 62 findings to none). The hooks
 * file (scripts/fuzz_hooks.py) says which refusals that check excuses and why: server-issued
 * values, the network's verdicts, and the five operations (the most the issue allows) whose rule
 * JSON Schema cannot carry, each named in its OpenAPI description.
 */
const ALL_CHECKS = ['--checks', 'all'];

export async function runSchemathesis(o: FuzzOptions): Promise<FuzzResult> {
  if (!existsSync(SCHEMATHESIS)) throw new Error(`${SCHEMATHESIS} missing: run \`node scripts/bootstrap.mjs\``);
  rmSync(o.workDir, { recursive: true, force: true });
  mkdirSync(o.workDir, { recursive: true });
  // Web Fuzzing Commons auth file: two users, each a fixed API-key header; `peers` turns on the
  // object-level authorization check (a peer must not read what the owner created).
  const authFile = join(o.workDir, 'auth.json');
  writeFileSync(
    authFile,
    JSON.stringify({
      auth: [
        { name: 'owner', fixedHeaders: [{ name: 'x-api-key', value: o.ownerKey }] },
        { name: 'peer', fixedHeaders: [{ name: 'x-api-key', value: o.peerKey }] },
      ],
    }),
  );
  const configFile = join(o.workDir, 'schemathesis.toml');
  // Invalid input may also be refused before the app sees it: 414 for a URL over 8 KiB (a huge
  // query string), 431 for headers over Node's limit. That is a rejection too, so it
  // joins schemathesis' default list for negative_data_rejection.
  const rejections = ['400', '401', '403', '404', '405', '406', '409', '413', '415', '422', '414', '428', '429', '431', '5xx'];
  writeFileSync(
    configFile,
    [
      `hooks = ${JSON.stringify(HOOKS)}`, '',
      '[auth.wfc]', `path = ${JSON.stringify(authFile)}`, 'user = "owner"', 'peers = ["owner", "peer"]', '',
      '[checks.negative_data_rejection]', `expected-statuses = ${JSON.stringify(rejections)}`, '',
    ].join('\n'),
  );
  const junit = join(o.workDir, 'junit.xml');
  const args = [
    '--config-file', configFile,
    'run', `${o.baseUrl}/openapi.json`,
    '--url', o.baseUrl,
    ...(o.checks?.length ? ['--checks', o.checks.join(',')] : ALL_CHECKS),
    // Connecting a LinkedIn page asks LinkedIn synchronously (organization ACLs): with the network
    // out of reach its answer is a 502 `provider_unavailable`, right for a gateway but a finding for
    // not_a_server_error, which the CLI's --checks cannot lift for one operation. It is left out
    // here; test/integration/oauthConnect.test.ts drives it against the fake LinkedIn.
    '--exclude-path', '/integrations/{id}/pages',
    ...(o.pathRegex ? ['--include-path-regex', o.pathRegex] : []),
    '--phases', (o.phases ?? ['examples', 'coverage', 'fuzzing', 'stateful']).join(','),
    '--max-examples', String(o.maxExamples),
    '--seed', String(o.seed),
    '--workers', String(o.workers ?? 1),
    '--generation-database', 'none',
    '--request-timeout', '30',
    '--report', 'junit', '--report-junit-path', junit,
    '--no-color',
    ...(o.maxTime ? ['--max-time', String(o.maxTime)] : []),
  ];
  const child = spawn(SCHEMATHESIS, args, { cwd: o.workDir, env: { ...process.env, SCHEMATHESIS_TELEMETRY: 'false', NO_COLOR: '1' } });
  let output = '';
  const take = (chunk: Buffer) => {
    output += chunk.toString();
    if (o.echo) process.stderr.write(chunk);
  };
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  const exitCode = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
  const xml = existsSync(junit) ? readFileSync(junit, 'utf8') : '';
  return { exitCode, cases: countCases(output), findings: parseFindings(xml), output };
}

/** The summary's "N test cases" line (schemathesis counts generated cases across phases). */
function countCases(output: string): number {
  const m = /([\d,]+) generated/.exec(output) ?? /([\d,]+) test cases?/.exec(output);
  return m ? Number(m[1]!.replace(/,/g, '')) : 0;
}

/** One line per failed check in the JUnit report: `<operation>: <code and title>` (e.g. `ST101 Server error`). */
export function parseFindings(xml: string): string[] {
  const out: string[] = [];
  // A passing case is self-closed (`<testcase … />`): it has no body to take the next case's.
  const re = /<testcase\b[^>]*?name="([^"]*)"[^>]*?(?:\/>|>([\s\S]*?)<\/testcase>)/g;
  for (let m = re.exec(xml); m; m = re.exec(xml)) {
    for (const f of (m[2] ?? '').matchAll(/<(failure|error)[^>]*message="([^"]*)"[^>]*>([\s\S]*?)<\/\1>/g)) {
      const titles = [...unescapeXml(f[3]!).matchAll(/^- (ST\d+ .*)$/gm)].map((t) => t[1]!);
      out.push(`${unescapeXml(m[1]!)}: ${titles.length ? [...new Set(titles)].join('; ') : unescapeXml(f[2]!).split('\n')[0]}`);
    }
  }
  return out;
}

const unescapeXml = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');

// `npm run fuzz`: the fuzz test as a long campaign (random seed unless FUZZ_SEED is set).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const seed = process.env.FUZZ_SEED ?? String(Math.floor(Math.random() * 2 ** 31));
  const r = spawnSync('npx', ['vitest', 'run', 'test/integration/fuzz.test.ts'], {
    cwd: ROOT_DIR,
    stdio: 'inherit',
    env: { ...process.env, FUZZ_CAMPAIGN: '1', FUZZ_SEED: seed },
  });
  process.exit(r.status ?? 1);
}
