/**
 * PostgreSQL over TLS on every connection the project opens (issue 31): a server of the test's
 * own with `ssl=on` and a certificate from a test CA (test/tlsFixtures.ts). The migrations run
 * through the ORM's pool; the raw pool, a COPY and the LISTEN connection all report TLS in
 * `pg_stat_ssl`. An untrusted CA is refused, and `sslmode=require` against the shared (no TLS)
 * server is refused rather than sent in plain text: before, the ORM dropped `sslmode` and
 * connected in plain text.
 */
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { from as copyFrom } from 'pg-copy-streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../domain/config.js';
import { migrate, openDatabase } from '../../db/orm.js';
import { listen } from '../../db/notifications.js';
import { pgTls } from '../../db/pgConnection.js';
import { makePki, startTlsPostgres, type Pki, type TlsPostgres } from '../tlsFixtures.js';

let pki: Pki;
let server: TlsPostgres;
beforeAll(async () => {
  pki = makePki();
  server = await startTlsPostgres(pki);
}, 60_000);
afterAll(async () => {
  await server?.stop();
  pki?.close();
});

const withParams = (url: string, params: Record<string, string>) => {
  const u = new URL(url);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  return u.toString();
};

describe('PostgreSQL TLS', () => {
  it('verify-full with the CA: migrations, ORM, raw pool, COPY and LISTEN all run over TLS', async () => {
    const url = withParams(server.url, { sslmode: 'verify-full', sslrootcert: pki.caFile });
    const db = await openDatabase(url, { max: 3 }, { migrations: { silent: true } as never });
    try {
      await migrate(db.orm);
      const em = db.orm.em.fork();
      const viaOrm = await em.getConnection().execute<{ ssl: boolean }[]>('select ssl from pg_stat_ssl where pid = pg_backend_pid()');
      expect(viaOrm[0]!.ssl).toBe(true);
      const raw = await db.pool.query<{ ssl: boolean; version: string }>('select ssl, version from pg_stat_ssl where pid = pg_backend_pid()');
      expect(raw.rows[0]).toMatchObject({ ssl: true, version: expect.stringMatching(/^TLSv1\.[23]$/) });
      // COPY on a client of the same pool
      const client = await db.pool.connect();
      try {
        await client.query('create temp table copied (n int)');
        await pipeline(Readable.from(['1\n2\n3\n']), client.query(copyFrom('copy copied from stdin')));
        expect((await client.query('select count(*)::int as n from copied')).rows[0].n).toBe(3);
        expect((await client.query('select ssl from pg_stat_ssl where pid = pg_backend_pid()')).rows[0].ssl).toBe(true);
      } finally {
        client.release();
      }
      // The LISTEN connection: receives a notification, and is itself a TLS connection.
      const got: string[] = [];
      const listener = listen({ databaseUrl: url, channel: 'tls_check', onNotify: (p) => got.push(p), onReset: () => {} });
      try {
        const deadline = Date.now() + 10_000;
        while (!listener.live && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        expect(listener.live).toBe(true);
        await db.pool.query(`notify tls_check, 'hello'`);
        while (!got.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        expect(got).toEqual(['hello']);
        const listening = await db.pool.query(`select s.ssl from pg_stat_ssl s join pg_stat_activity a using (pid) where a.application_name = 'listen:tls_check'`);
        expect(listening.rows).toEqual([{ ssl: true }]);
      } finally {
        await listener.close();
      }
    } finally {
      await db.close();
    }
  });

  it('PGSSLMODE and PGSSLROOTCERT apply when the URL names no sslmode', () => {
    const tls = pgTls(server.url, { PGSSLMODE: 'verify-ca', PGSSLROOTCERT: pki.caFile });
    expect(tls.mode).toBe('verify-ca');
    expect(tls.ssl && tls.ssl.ca).toBeDefined();
    // The URL wins over the environment.
    expect(pgTls(withParams(server.url, { sslmode: 'disable' }), { PGSSLMODE: 'verify-full' }).ssl).toBe(false);
    expect(() => pgTls(withParams(server.url, { sslmode: 'required' }))).toThrow(/sslmode must be one of/);
    expect(() => pgTls(withParams(server.url, { sslmode: 'verify-full', sslrootcert: '/nonexistent/ca.pem' }))).toThrow(/sslrootcert \/nonexistent\/ca.pem .* cannot be read/);
  });

  it('require without a CA encrypts; require with a CA nobody used refuses the server', async () => {
    const plain = await openDatabase(withParams(server.url, { sslmode: 'require' }), { max: 1 });
    try {
      expect((await plain.pool.query('select ssl from pg_stat_ssl where pid = pg_backend_pid()')).rows[0].ssl).toBe(true);
    } finally {
      await plain.close();
    }
    // The ORM connects when it opens: opening fails.
    for (const sslmode of ['require', 'verify-ca', 'verify-full']) {
      await expect(openDatabase(withParams(server.url, { sslmode, sslrootcert: pki.otherCaFile }), { max: 1 }), sslmode).rejects.toThrow(/unable to verify|self[- ]signed|certificate/i);
    }
  });

  it('sslmode=require against a server without TLS is refused, never sent in plain text', async () => {
    const noTls = withParams(loadConfig().databaseUrl, { sslmode: 'require' });
    await expect(openDatabase(noTls, { max: 1 })).rejects.toThrow(/does not support SSL/);
    // The LISTEN connection likewise: it reports the refusal and never goes live.
    const errors: Error[] = [];
    const listener = listen({ databaseUrl: noTls, channel: 'tls_refused', onNotify: () => {}, onReset: () => {}, onError: (e) => errors.push(e) });
    try {
      const deadline = Date.now() + 5_000;
      while (!errors.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(errors[0]?.message).toMatch(/does not support SSL/);
      expect(listener.live).toBe(false);
    } finally {
      await listener.close();
    }
  });
});
