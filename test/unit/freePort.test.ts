import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../harness.js';

describe('freePort (ports for servers the tests start later)', () => {
  it('picks ports below the kernel ephemeral range, free to listen on', async () => {
    // Outgoing connections take ports from that range: a port picked there was taken between the
    // pick and the server's start (the chaos stack's MinIO: "port already in use").
    const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    for (let i = 0; i < 20; i++) {
      const port = await freePort();
      expect(port).toBeGreaterThanOrEqual(1024);
      expect(port).toBeLessThan(ephemeralLow);
      const server = createServer();
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
      await new Promise((r) => server.close(r));
    }
  });
});
