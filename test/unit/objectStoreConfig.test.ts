/**
 * The object store against any S3-compatible service (issue 31): region, path or virtual-host
 * style and credentials from the environment. Presigning is computed locally (known region), so
 * the URLs are checked as a client would receive them.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../domain/config.js';
import { createObjectStore } from '../../infra/objectStore.js';

const cfg = (env: Record<string, string>) => loadConfig({ ...env }).s3;

describe('object store configuration', () => {
  it('AWS S3: virtual-host style on the regional endpoint, AWS_* credentials and region', async () => {
    const s3 = cfg({ S3_ENDPOINT: 'https://s3.eu-west-1.amazonaws.com', S3_PATH_STYLE: 'false', S3_BUCKET: 'acme-media', AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret', AWS_SESSION_TOKEN: 'tok', AWS_REGION: 'eu-west-1' });
    expect(s3).toMatchObject({ accessKey: 'AKIAEXAMPLE', secretKey: 'secret', sessionToken: 'tok', region: 'eu-west-1', pathStyle: false });
    const url = new URL(await createObjectStore(s3).readUrl('media/w1/a.png', 60));
    expect(url.host).toBe('acme-media.s3.eu-west-1.amazonaws.com');
    expect(url.pathname).toBe('/media/w1/a.png');
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(/^AKIAEXAMPLE\/\d{8}\/eu-west-1\/s3\/aws4_request$/);
    expect(url.searchParams.get('X-Amz-Security-Token')).toBe('tok');
  });

  it('MinIO and other S3-compatible servers: path style (the default), signed for S3_PUBLIC_ENDPOINT', async () => {
    const s3 = cfg({ S3_ENDPOINT: 'http://minio:9000', S3_PUBLIC_ENDPOINT: 'https://media.example.com', S3_ACCESS_KEY: 'app', S3_SECRET_KEY: 's', S3_REGION: 'auto' });
    expect(s3.pathStyle).toBe(true);
    const url = new URL(await createObjectStore(s3).readUrl('w1/a.png', 60));
    expect(url.origin).toBe('https://media.example.com');
    expect(url.pathname).toBe('/media/w1/a.png');
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(/^app\/\d{8}\/auto\/s3\/aws4_request$/);
    // S3_* wins over AWS_*
    expect(cfg({ S3_ACCESS_KEY: 'a', AWS_ACCESS_KEY_ID: 'b' }).accessKey).toBe('a');
    expect(() => cfg({ S3_PATH_STYLE: 'maybe' })).toThrow(/S3_PATH_STYLE must be one of/);
  });

  it('pool sizes come from API_DB_POOL_MAX and WORKER_DB_POOL_MAX (20 each by default)', () => {
    expect(loadConfig({}).dbPoolMax).toEqual({ api: 20, worker: 20 });
    expect(loadConfig({ API_DB_POOL_MAX: '8', WORKER_DB_POOL_MAX: '12' }).dbPoolMax).toEqual({ api: 8, worker: 12 });
  });
});
