/**
 * Temporal through a TLS endpoint (issue 31): a TLS-terminating proxy in front of the shared dev
 * server (test/tlsFixtures.ts), with a certificate from a test CA. The API's client and the
 * worker (both through infra/temporalConnection.ts, configured by TEMPORAL_TLS_* variables) run
 * a job end to end through it; with client certificates required, the same works with
 * TEMPORAL_TLS_CERT_FILE/KEY_FILE and fails without; a server whose CA we do not trust is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../domain/config.js';
import { connectTemporal, connectTemporalWorker, temporalEndpoint } from '../../infra/temporalConnection.js';
import { ensureTemporalNamespace } from '../../scripts/temporalSetup.js';
import { startTestApp } from '../harness.js';
import { makePki, startTlsProxy, type Pki, type TlsProxy } from '../tlsFixtures.js';

let pki: Pki;
let tlsOnly: TlsProxy;
let mutual: TlsProxy;
const devServer = loadConfig().temporal.address;

beforeAll(async () => {
  pki = makePki();
  tlsOnly = await startTlsProxy(pki, devServer);
  mutual = await startTlsProxy(pki, devServer, { requireClientCert: true });
});
afterAll(async () => {
  await tlsOnly?.close();
  await mutual?.close();
  pki?.close();
});

const configFor = (env: Record<string, string>) => loadConfig({ ...process.env, ...env });

/** The API and an inline worker on the proxy; one bulk upsert job end to end. */
async function jobThrough(env: Record<string, string>) {
  const app = await startTestApp({ env });
  try {
    const ws = await app.createWorkspace({ credits: 100 });
    const source = await app.http('POST', '/sources', {
      apiKey: ws.apiKey,
      body: { sourceType: 'importFromWebhook', sourceIdentifier: 'tls', sourceMeta: { config: { fieldMapping: [{ sourceFieldName: 'Email', targetFieldName: 'contact.workEmail' }] } } },
    });
    expect(source.status, JSON.stringify(source.body)).toBe(200);
    const accepted = await app.http('POST', `/contacts/${source.body.data.id}/bulk-upsert-contacts`, { apiKey: ws.apiKey, body: { contactsData: [{ Email: 'ada@tls.example' }] } });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    const job = await app.waitForJob(accepted.body.jobId, ws.apiKey, 60_000);
    expect(job).toMatchObject({ jobStatus: 'completed', jobResponsePayload: { created: 1 } });
  } finally {
    await app.close();
  }
}

describe('Temporal over TLS', () => {
  it('reads TLS, mTLS and API key settings from the environment', () => {
    expect(temporalEndpoint(configFor({ TEMPORAL_ADDRESS: 'h:7233' })).tls).toBeUndefined();
    expect(temporalEndpoint(configFor({ TEMPORAL_ADDRESS: 'h:7233', TEMPORAL_TLS: 'true' })).tls).toBe(true);
    const cloud = temporalEndpoint(configFor({ TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_API_KEY: 'key-1' }));
    expect(cloud).toEqual({ address: 'ns.acct.tmprl.cloud:7233', tls: true, apiKey: 'key-1' });
    const m = temporalEndpoint(configFor({ TEMPORAL_TLS_CA_FILE: pki.caFile, TEMPORAL_TLS_SERVER_NAME: 'temporal.test', TEMPORAL_TLS_CERT_FILE: pki.clientCertFile, TEMPORAL_TLS_KEY_FILE: pki.clientKeyFile }));
    expect(m.tls).toMatchObject({ serverNameOverride: 'temporal.test', serverRootCACertificate: expect.any(Buffer), clientCertPair: { crt: expect.any(Buffer), key: expect.any(Buffer) } });
    expect(() => temporalEndpoint(configFor({ TEMPORAL_TLS_CERT_FILE: pki.clientCertFile }))).toThrow(/go together/);
    expect(() => temporalEndpoint(configFor({ TEMPORAL_TLS_CA_FILE: '/nonexistent.pem' }))).toThrow(/TEMPORAL_TLS_CA_FILE \/nonexistent.pem cannot be read/);
    expect(() => temporalEndpoint(configFor({ TEMPORAL_TLS: 'yes' }))).toThrow(/TEMPORAL_TLS must be true or false/);
  });

  it('API and worker run a job through a TLS endpoint with the test CA and server name', async () => {
    const before = tlsOnly.accepted;
    await jobThrough({ TEMPORAL_ADDRESS: tlsOnly.address, TEMPORAL_TLS_CA_FILE: pki.caFile, TEMPORAL_TLS_SERVER_NAME: 'temporal.test' });
    // Client and worker went through the proxy (the dev server's plain port was not used).
    expect(tlsOnly.accepted - before).toBeGreaterThanOrEqual(2);
  }, 120_000);

  it('with client certificates required: the setup script, API and worker pass with TEMPORAL_TLS_CERT_FILE/KEY_FILE', async () => {
    const env = { TEMPORAL_ADDRESS: mutual.address, TEMPORAL_TLS_CA_FILE: pki.caFile, TEMPORAL_TLS_SERVER_NAME: 'temporal.test', TEMPORAL_TLS_CERT_FILE: pki.clientCertFile, TEMPORAL_TLS_KEY_FILE: pki.clientKeyFile };
    expect(await ensureTemporalNamespace(configFor(env))).toMatchObject({ namespaceCreated: false });
    await jobThrough(env);
  }, 120_000);

  it('with client certificates required: a client without one is refused', async () => {
    const config = configFor({ TEMPORAL_ADDRESS: mutual.address, TEMPORAL_TLS_CA_FILE: pki.caFile, TEMPORAL_TLS_SERVER_NAME: 'temporal.test' });
    await expect(connectTemporal(config).then((c) => c.close())).rejects.toThrow();
    await expect(connectTemporalWorker(config).then((c) => c.close())).rejects.toThrow();
  }, 60_000);

  it('a server whose certificate no trusted CA signed is refused, by the client and by the worker', async () => {
    for (const env of [
      { TEMPORAL_ADDRESS: tlsOnly.address, TEMPORAL_TLS_CA_FILE: pki.otherCaFile, TEMPORAL_TLS_SERVER_NAME: 'temporal.test' },
      // the system's CAs do not know the test CA either
      { TEMPORAL_ADDRESS: tlsOnly.address, TEMPORAL_TLS: 'true', TEMPORAL_TLS_SERVER_NAME: 'temporal.test' },
      // the right CA, but a name the certificate does not carry
      { TEMPORAL_ADDRESS: tlsOnly.address, TEMPORAL_TLS_CA_FILE: pki.caFile, TEMPORAL_TLS_SERVER_NAME: 'other.test' },
    ] as Record<string, string>[]) {
      const config = configFor(env);
      await expect(connectTemporal(config).then((c) => c.close()), JSON.stringify(env)).rejects.toThrow();
      await expect(connectTemporalWorker(config).then((c) => c.close()), JSON.stringify(env)).rejects.toThrow();
    }
  }, 60_000);
});
