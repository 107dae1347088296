/**
 * The test harness itself: what a test app leaves on the shared dev stack when it closes.
 */
import { describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { startTestApp } from '../harness.js';

describe('test app', () => {
  it('closing it terminates the workflows it left running on its task queues', async () => {
    // No worker: the job's workflow is started and stays running, like a publish due tomorrow.
    const app = await startTestApp({ workerMode: 'none' });
    const connection = await Connection.connect({ address: app.config.temporal.address });
    const temporal = new Client({ connection, namespace: app.config.temporal.namespace });
    const running = async () => (await temporal.workflow.count(`TaskQueue STARTS_WITH "${app.config.temporal.taskQueue}" AND ExecutionStatus = "Running"`)).count;
    try {
      try {
        const ws = await app.createWorkspace({ credits: 100 });
        const r = await app.http('POST', '/contacts/unified-data-api', { apiKey: ws.apiKey, body: { fields: ['basic_contact_data'], pronet: 'https://www.pronet.example/in/ada-lovelace/' } });
        expect(r.status, JSON.stringify(r.body)).toBe(202);
        await expect.poll(running, { timeout: 10_000 }).toBe(1);
      } finally {
        await app.close();
      }
      await expect.poll(running, { timeout: 10_000 }).toBe(0);
    } finally {
      await connection.close();
    }
  });
});
