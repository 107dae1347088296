/** The object store (MinIO or any S3): media objects and claim-check payloads. */
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

function clientFor(endpoint: string, cfg: Config['s3']): Client {
  const url = new URL(endpoint);
  return new Client({
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
