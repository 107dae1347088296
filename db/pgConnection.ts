/**
 * How every connection the project opens to PostgreSQL (the ORM's pool, which the raw `pg`
 * paths and COPY share, and the LISTEN client) reads TLS from `DATABASE_URL`, libpq's way:
 * `?sslmode=…&sslrootcert=…&sslcert=…&sslkey=…`, or `PGSSLMODE`, `PGSSLROOTCERT`, `PGSSLCERT`,
 * `PGSSLKEY` when the URL names none (the URL wins).
 *
 * | sslmode              | TLS | server certificate checked                                    |
 * | disable/allow/prefer | no  | — (pg cannot fall back between TLS and plain text)            |
 * | require              | yes | against `sslrootcert` if one is given (as libpq), else not   |
 * | verify-ca            | yes | chain against `sslrootcert` (or the system CAs), not the host |
 * | verify-full          | yes | chain and host name                                           |
 *
 * A server without TLS refuses any mode from `require` on ("The server does not support SSL
 * connections"): never plain text when TLS was asked for. MikroORM builds its pool from the
 * URL's host, port, user and database only, and pg's own URL parsing would override explicit
 * options, so the TLS settings are resolved here once and handed to each client as `ssl`.
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { checkServerIdentity } from 'node:tls';

const MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof MODES)[number];
const SSL_PARAMS = ['sslmode', 'sslrootcert', 'sslcert', 'sslkey', 'ssl', 'uselibpqcompat'];

export interface PgTls {
  mode: SslMode;
  /** pg's `ssl` option: false for plain text. */
  ssl: false | ConnectionOptions;
}

export function pgTls(databaseUrl: string, env: NodeJS.ProcessEnv = process.env): PgTls {
  const params = new URL(databaseUrl).searchParams;
  const setting = (param: string, variable: string) => params.get(param) ?? env[variable] ?? undefined;
  const mode = (setting('sslmode', 'PGSSLMODE') ?? 'disable') as SslMode;
  if (!MODES.includes(mode)) throw new Error(`sslmode must be one of ${MODES.join(', ')} (got ${JSON.stringify(mode)} in DATABASE_URL or PGSSLMODE)`);
  if (mode === 'disable' || mode === 'allow' || mode === 'prefer') return { mode, ssl: false };
  const file = (param: string, variable: string) => {
    const path = setting(param, variable);
    if (!path) return undefined;
    try {
      return readFileSync(path);
    } catch (e) {
      throw new Error(`${param} ${path} (DATABASE_URL or ${variable}) cannot be read: ${(e as Error).message}`);
    }
  };
  const ca = file('sslrootcert', 'PGSSLROOTCERT');
  const cert = file('sslcert', 'PGSSLCERT');
  const key = file('sslkey', 'PGSSLKEY');
  if (!cert !== !key) throw new Error('sslcert and sslkey go together (DATABASE_URL or PGSSLCERT/PGSSLKEY)');
  const ssl: ConnectionOptions = { ...(ca ? { ca } : {}), ...(cert ? { cert, key } : {}) };
  // require without a root certificate: encrypted, unauthenticated (libpq's meaning).
  if (mode === 'require' && !ca) return { mode, ssl: { ...ssl, rejectUnauthorized: false } };
  // require with a root certificate behaves as verify-ca (libpq); verify-ca skips the host name.
  if (mode !== 'verify-full') return { mode, ssl: { ...ssl, rejectUnauthorized: true, checkServerIdentity: () => undefined } };
  return { mode, ssl: { ...ssl, rejectUnauthorized: true, checkServerIdentity } };
}

/** `databaseUrl` without its TLS parameters (pg's URL parser would otherwise override `ssl`). */
export function withoutTlsParams(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  for (const p of SSL_PARAMS) url.searchParams.delete(p);
  return url.toString();
}

/** Options for `new pg.Client` / `new pg.Pool`: the URL and its TLS. */
export function pgClientOptions(databaseUrl: string, env: NodeJS.ProcessEnv = process.env): { connectionString: string; ssl: false | ConnectionOptions } {
  return { connectionString: withoutTlsParams(databaseUrl), ssl: pgTls(databaseUrl, env).ssl };
}
