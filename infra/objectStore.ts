/** The object store (MinIO or any S3): media objects and claim-check payloads. */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Duplex } from 'node:stream';
import { Client } from 'minio';
import type { Config } from '../domain/config.js';

export interface ObjectStore {
  client: Client;
  bucket: string;
  /** Presigned GET URL, valid for `seconds` (default 15 minutes). */
  readUrl(objectName: string, seconds?: number): Promise<string>;
  ensureBucket(): Promise<void>;
  ping(): Promise<void>;
}

/**
 * The MinIO client sets no timeout and ignores a socket's `timeout` event, so a store that accepts
 * and never answers would hold the request for ever. This agent ends such a socket with an error,
 * which the client's request rejects with. It bounds inactivity, not duration: a large upload that
 * keeps moving is never cut.
 */
function stallBoundedAgent(https: boolean, timeoutMs: number): HttpAgent {
  const Base = https ? HttpsAgent : HttpAgent;
  const agent = new Base({ keepAlive: true, timeout: timeoutMs });
  const create = agent.createConnection.bind(agent) as (...args: unknown[]) => Duplex;
  agent.createConnection = ((...args: unknown[]) => {
    const socket = create(...args);
    socket.on('timeout', () => socket.destroy(new Error(`the object store did not answer within ${timeoutMs} ms`)));
    return socket;
  }) as HttpAgent['createConnection'];
  return agent;
}

function clientFor(endpoint: string, cfg: Config['s3']): Client {
  const url = new URL(endpoint);
  return new Client({
    transportAgent: stallBoundedAgent(url.protocol === 'https:', cfg.requestTimeoutMs),
    endPoint: url.hostname,
    port: url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80,
    useSSL: url.protocol === 'https:',
    accessKey: cfg.accessKey,
    secretKey: cfg.secretKey,
    ...(cfg.sessionToken ? { sessionToken: cfg.sessionToken } : {}),
    pathStyle: cfg.pathStyle,
    // Known region: presigning is computed locally, it never calls the endpoint.
    region: cfg.region,
  });
}

export function createObjectStore(cfg: Config['s3']): ObjectStore {
  const client = clientFor(cfg.endpoint, cfg);
  // readUrls are signed for the host clients call (S3_PUBLIC_ENDPOINT), not the internal one the
  // service talks to: the signature covers the host, so the URL cannot be rewritten afterwards.
  const presigner = cfg.publicEndpoint === cfg.endpoint ? client : clientFor(cfg.publicEndpoint, cfg);
  return {
    client,
    bucket: cfg.bucket,
    readUrl: (objectName, seconds = 15 * 60) => presigner.presignedGetObject(cfg.bucket, objectName, seconds),
    async ensureBucket() {
      if (!(await client.bucketExists(cfg.bucket))) {
        try {
          await client.makeBucket(cfg.bucket, cfg.region);
        } catch (e) {
          // Another process created it between the check and the call.
          if (!(await client.bucketExists(cfg.bucket))) throw e;
        }
      }
    },
    async ping() {
      await client.bucketExists(cfg.bucket);
    },
  };
}
