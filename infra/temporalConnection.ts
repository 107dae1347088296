/**
 * The one place that dials Temporal: the API's and scripts' client connection, the worker's
 * native connection and the setup script all take their options here, so a secured cluster
 * (TLS, mTLS, API key: Temporal Cloud, a self-hosted cluster behind TLS) works for every one.
 *
 * | variable                  | meaning                                                              |
 * | TEMPORAL_ADDRESS          | host:port of the frontend (Cloud: `<ns>.<acct>.tmprl.cloud:7233`)    |
 * | TEMPORAL_TLS              | `true`: TLS with the system's CAs; `false`: plain text even if others are set |
 * | TEMPORAL_TLS_CA_FILE      | PEM file of the CA that signed the server's certificate              |
 * | TEMPORAL_TLS_SERVER_NAME  | name checked in the server's certificate (and sent as SNI)           |
 * | TEMPORAL_TLS_CERT_FILE    | PEM client certificate (mTLS), with                                  |
 * | TEMPORAL_TLS_KEY_FILE     | its PEM private key                                                  |
 * | TEMPORAL_API_KEY          | API key, sent as `Authorization: Bearer …` (Temporal Cloud API keys) |
 *
 * Any of the TLS or API-key variables switches TLS on (an API key never travels in plain text
 * unless TEMPORAL_TLS=false says so, e.g. for a local proxy).
 */
import { readFileSync } from 'node:fs';
import { Connection, type ConnectionOptions } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Config } from '../domain/config.js';

type TLSConfig = Exclude<NonNullable<ConnectionOptions['tls']>, boolean>;

export interface TemporalEndpoint {
  address: string;
  tls?: TLSConfig | boolean;
  apiKey?: string;
}

function pem(env: NodeJS.ProcessEnv, variable: string): Buffer | undefined {
  const path = env[variable];
  if (!path) return undefined;
  try {
    return readFileSync(path);
  } catch (e) {
    throw new Error(`${variable} ${path} cannot be read: ${(e as Error).message}`);
  }
}

/** Address, TLS and API key of the configured Temporal frontend (files read now: a missing one fails at start). */
export function temporalEndpoint(config: Pick<Config, 'temporal'> & { env?: NodeJS.ProcessEnv }): TemporalEndpoint {
  const env = config.env ?? process.env;
  const ca = pem(env, 'TEMPORAL_TLS_CA_FILE');
  const crt = pem(env, 'TEMPORAL_TLS_CERT_FILE');
  const key = pem(env, 'TEMPORAL_TLS_KEY_FILE');
  if (!crt !== !key) throw new Error('TEMPORAL_TLS_CERT_FILE and TEMPORAL_TLS_KEY_FILE go together (mTLS client certificate and its key)');
  const serverName = env.TEMPORAL_TLS_SERVER_NAME || undefined;
  const apiKey = env.TEMPORAL_API_KEY || undefined;
  const explicit = env.TEMPORAL_TLS?.trim().toLowerCase();
  if (explicit && !['true', 'false', '1', '0'].includes(explicit)) throw new Error(`TEMPORAL_TLS must be true or false (got ${JSON.stringify(env.TEMPORAL_TLS)})`);
  const on = explicit ? explicit === 'true' || explicit === '1' : Boolean(ca || crt || serverName || apiKey);
  const tlsConfig: TLSConfig = {
    ...(ca ? { serverRootCACertificate: ca } : {}),
    ...(serverName ? { serverNameOverride: serverName } : {}),
    ...(crt && key ? { clientCertPair: { crt, key } } : {}),
  };
  return {
    address: config.temporal.address,
    ...(on ? { tls: Object.keys(tlsConfig).length ? tlsConfig : true } : {}),
    ...(apiKey ? { apiKey } : {}),
  };
}

/** A client connection that dials on first use (tools that never start a workflow never dial). */
export function lazyTemporalConnection(config: Pick<Config, 'temporal' | 'env'>): Connection {
  return Connection.lazy(temporalEndpoint(config));
}

/** A client connection, connected now (fails if the server cannot be reached or refuses us). */
export function connectTemporal(config: Pick<Config, 'temporal' | 'env'>): Promise<Connection> {
  return Connection.connect(temporalEndpoint(config));
}

/** The worker's native (Core) connection. */
export function connectTemporalWorker(config: Pick<Config, 'temporal' | 'env'>): Promise<NativeConnection> {
  return NativeConnection.connect(temporalEndpoint(config));
}
