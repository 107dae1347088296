/**
 * TLS at test time: a throwaway PKI made with openssl (a CA, a server certificate for
 * `localhost`/127.0.0.1/`temporal.test`, a client certificate, and a second CA nobody trusts),
 * a TLS-terminating proxy (what a load balancer or Temporal Cloud's edge does in front of a
 * frontend) and a PostgreSQL of the test's own with `ssl=on`, from the embedded binaries.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import pg from 'pg';
import { pgBinaries, pgUser } from '../scripts/stack.js';
import { freePort } from './harness.js';

export interface Pki {
  dir: string;
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  clientCertFile: string;
  clientKeyFile: string;
  /** A CA that signed nothing here: trusting it alone must refuse the server. */
  otherCaFile: string;
  close(): void;
}

function openssl(dir: string, args: string[]) {
  const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${r.stderr}`);
}

function ca(dir: string, name: string) {
  openssl(dir, ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '2', '-subj', `/CN=${name}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
}

function leaf(dir: string, name: string, caName: string, ext: string) {
  openssl(dir, ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`]);
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', `${caName}.pem`, '-CAkey', `${caName}.key`, '-CAcreateserial', '-out', `${name}.pem`, '-days', '2', '-extfile', `${name}.ext`]);
}

export function makePki(): Pki {
  const dir = mkdtempSync(join(tmpdir(), 'pki-'));
  ca(dir, 'test-ca');
  ca(dir, 'other-ca');
  leaf(dir, 'server', 'test-ca', 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,DNS:temporal.test,IP:127.0.0.1\n');
  leaf(dir, 'client', 'test-ca', 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n');
  const f = (n: string) => join(dir, n);
  return {
    dir,
    caFile: f('test-ca.pem'),
    serverCertFile: f('server.pem'),
    serverKeyFile: f('server.key'),
    clientCertFile: f('client.pem'),
    clientKeyFile: f('client.key'),
    otherCaFile: f('other-ca.pem'),
    close: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface TlsProxy {
  address: string;
  /** TLS handshakes the proxy completed (a refused client never gets a connection through). */
  accepted: number;
  close(): Promise<void>;
}

/**
 * TLS on 127.0.0.1:<port>, forwarding the decrypted bytes to `target` (the dev server's plain
 * gRPC: HTTP/2 with prior knowledge, as a TLS-terminating balancer forwards it). With
 * `requireClientCert`, a client without a certificate signed by the test CA is refused.
 */
export async function startTlsProxy(pki: Pki, target: string, opts: { requireClientCert?: boolean } = {}): Promise<TlsProxy> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const sockets = new Set<{ destroy(): void }>();
  const proxy: TlsProxy = { address: '', accepted: 0, close: async () => {} };
  const server = createTlsServer(
    {
      key: readFileSync(pki.serverKeyFile),
      cert: readFileSync(pki.serverCertFile),
      ca: readFileSync(pki.caFile),
      requestCert: Boolean(opts.requireClientCert),
      rejectUnauthorized: Boolean(opts.requireClientCert),
      ALPNProtocols: ['h2'],
    },
    (client) => {
      proxy.accepted++;
      const upstream = connect(port, host);
      sockets.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      const drop = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
    },
  );
  server.on('tlsClientError', () => {});
  const listenPort = await freePort();
  await new Promise<void>((r) => (server as unknown as Server).listen(listenPort, '127.0.0.1', r));
  proxy.address = `127.0.0.1:${listenPort}`;
  proxy.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  };
  return proxy;
}

export interface TlsPostgres {
  /** `postgres://app@127.0.0.1:<port>/app` (trust authentication, TLS offered). */
  url: string;
  stop(): Promise<void>;
}

/** A PostgreSQL of the caller's own with `ssl=on` and the PKI's server certificate. */
export async function startTlsPostgres(pki: Pki): Promise<TlsPostgres> {
  const bin = await pgBinaries();
  const ids = pgUser();
  const root = mkdtempSync(join(tmpdir(), 'pgtls-'));
  const data = join(root, 'data');
  mkdirSync(data);
  if (ids) {
    chownSync(root, ids.uid, ids.gid);
    chownSync(data, ids.uid, ids.gid);
  }
  const init = spawnSync(bin.initdb, ['-D', data, '-U', 'app', '-A', 'trust', '-E', 'UTF8', '--locale=C'], { encoding: 'utf8', ...(ids ?? {}) });
  if (init.status !== 0) throw new Error(`initdb: ${init.stderr}`);
  // The server reads its key only if the file belongs to it and no one else can read it.
  for (const [from, to] of [[pki.serverCertFile, 'server.crt'], [pki.serverKeyFile, 'server.key']] as const) {
    copyFileSync(from, join(data, to));
    chmodSync(join(data, to), 0o600);
    if (ids) chownSync(join(data, to), ids.uid, ids.gid);
  }
  const port = await freePort();
  const child: ChildProcess = spawn(bin.postgres, ['-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', root, '-c', 'ssl=on', '-c', 'ssl_cert_file=server.crt', '-c', 'ssl_key_file=server.key', '-c', 'max_connections=30', '-c', 'fsync=off'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    ...(ids ?? {}),
  });
  let log = '';
  child.stderr!.on('data', (b: Buffer) => (log += b.toString()));
  const url = `postgres://app@127.0.0.1:${port}/postgres`;
  for (let i = 0; ; i++) {
    const c = new pg.Client({ connectionString: url });
    c.on('error', () => {});
    try {
      await c.connect();
      await c.query('create database app');
      await c.end();
      break;
    } catch (e) {
      await c.end().catch(() => {});
      if (child.exitCode !== null || i > 100) throw new Error(`PostgreSQL with TLS did not start: ${(e as Error).message}\n${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url: `postgres://app@127.0.0.1:${port}/app`,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGINT'); // fast shutdown
        await exited;
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}
