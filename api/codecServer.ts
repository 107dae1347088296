/**
 * Temporal's remote codec protocol on a port of its own (`CODEC_PORT`), so an operator's Temporal
 * UI (or `temporal workflow show --codec-endpoint`) can show the payloads this service seals:
 * `POST <endpoint>/encode` and `POST <endpoint>/decode` take and answer `{"payloads": [...]}`
 * in protobuf JSON (metadata values and data base64). Only the last path segment names the
 * operation, as the protocol asks.
 *
 * Operator credentials are required: `Authorization: Bearer <CODEC_AUTH_TOKEN>`, or, for a
 * browser UI that cannot add that header (the Temporal UI sends one only when it runs with SSO),
 * the token as the path segment before the operation — endpoint `http://host:port/<token>`.
 * The browser calls this port directly: the Temporal UI's origin (`CODEC_CORS_ORIGINS`) is allowed.
 */
import type { IncomingMessage } from 'node:http';
import type { Payload } from '@temporalio/common';
import type { Config } from '../domain/config.js';
import { KeyringError } from '../domain/keyring.js';
import { escapePointer } from '../domain/errors.js';
import { STRICT_UTF8 } from './validation.js';
import type { EncryptionCodec } from '../domain/payloadCodec.js';
import { errorJson, hasBearer, sendJson, startOperatorServer, tokenMatches, type OperatorServer } from '../telemetry/operatorHttp.js';

/** A history page holds a few payloads of at most 2 MB (Temporal's default limit) each. */
const BODY_LIMIT = 16 * 1024 * 1024;
const MIN_TOKEN_LENGTH = 16;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

class CodecRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function startCodecServer(config: Config, codec: EncryptionCodec): Promise<OperatorServer> {
  const { port, host, authToken, corsOrigins } = config.codec;
  if (port === null) throw new Error('CODEC_PORT is not set');
  if (authToken.length < MIN_TOKEN_LENGTH) throw new Error(`CODEC_PORT is set but CODEC_AUTH_TOKEN is missing or shorter than ${MIN_TOKEN_LENGTH} characters`);
  return startOperatorServer(port, host, async (req, res) => {
    const origin = req.headers.origin;
    const cors: Record<string, string> =
      origin && corsOrigins.includes(origin)
        ? { 'Access-Control-Allow-Origin': origin, 'Access-Control-Allow-Credentials': 'true', Vary: 'Origin' }
        : {};
    try {
      const segments = (req.url ?? '/').split('?')[0]!.split('/').filter(Boolean);
      const operation = segments.at(-1);
      if (operation !== 'encode' && operation !== 'decode') throw new CodecRequestError(404, 'route_not_found', 'The codec answers POST …/encode and POST …/decode');
      if (req.method === 'OPTIONS') {
        // A CORS preflight carries no credentials; the POST that follows must.
        res.writeHead(204, { ...cors, 'Access-Control-Allow-Methods': 'POST', 'Access-Control-Allow-Headers': 'authorization, content-type, x-namespace', 'Access-Control-Max-Age': '600' }).end();
        return;
      }
      if (req.method !== 'POST') throw new CodecRequestError(405, 'method_not_allowed', `${req.method} is not allowed; allowed: POST`);
      const pathToken = segments.at(-2);
      if (!hasBearer(req, authToken) && !(pathToken !== undefined && tokenMatches(pathToken, authToken))) {
        throw new CodecRequestError(401, 'unauthorized', 'Operator credentials required: Authorization: Bearer <CODEC_AUTH_TOKEN> (or the token as the endpoint path)');
      }
      const payloads = parsePayloads(await readBody(req));
      let out: Payload[];
      try {
        out = operation === 'encode' ? await codec.encode(payloads) : await codec.decode(payloads);
      } catch (e) {
        if (e instanceof KeyringError) throw new CodecRequestError(422, 'payload_not_decodable', e.message);
        throw e;
      }
      sendJson(res, 200, { payloads: out.map(toJson) }, cors);
    } catch (e) {
      if (!(e instanceof CodecRequestError)) throw e;
      sendJson(res, e.status, errorJson(e.code, e.message), { ...cors, ...(e.status === 401 ? { 'WWW-Authenticate': 'Bearer' } : {}) });
    }
  });
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const declared = Number(req.headers['content-length']);
  if (declared > BODY_LIMIT) throw new CodecRequestError(413, 'payload_too_large', `Request body is larger than ${BODY_LIMIT} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT) {
      req.resume();
      throw new CodecRequestError(413, 'payload_too_large', `Request body is larger than ${BODY_LIMIT} bytes`);
    }
    chunks.push(chunk);
  }
  let text: string;
  try {
    // Bytes that are not UTF-8 are refused, not read as U+FFFD (as `toString('utf8')` would).
    text = STRICT_UTF8.decode(Buffer.concat(chunks));
  } catch {
    throw new CodecRequestError(400, 'invalid_json', 'Request body is not valid JSON: it is not valid UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new CodecRequestError(400, 'invalid_json', 'Request body is not valid JSON');
  }
}

function base64Field(value: unknown, pointer: string): Uint8Array {
  if (typeof value !== 'string' || !BASE64.test(value)) throw new CodecRequestError(400, 'validation_failed', `${pointer} must be a base64 string`);
  return Buffer.from(value, 'base64');
}

/** `{"payloads": [{"metadata": {"encoding": "<b64>"}, "data": "<b64>"}]}` → payloads. */
function parsePayloads(body: unknown): Payload[] {
  const list = (body as { payloads?: unknown } | null)?.payloads;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new CodecRequestError(400, 'validation_failed', 'Request body must be an object with a payloads array');
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new CodecRequestError(400, 'validation_failed', '/payloads must be an array');
  return list.map((p: unknown, i) => {
    if (typeof p !== 'object' || p === null || Array.isArray(p)) throw new CodecRequestError(400, 'validation_failed', `/payloads/${i} must be an object`);
    const { metadata = {}, data = '' } = p as { metadata?: unknown; data?: unknown };
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) throw new CodecRequestError(400, 'validation_failed', `/payloads/${i}/metadata must be an object`);
    // fromEntries defines own properties: a `__proto__` key stays a key.
    const meta = Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, base64Field(v, `/payloads/${i}/metadata/${escapePointer(k)}`)]));
    return { metadata: meta, data: base64Field(data, `/payloads/${i}/data`) };
  });
}

function toJson(p: Payload) {
  const b64 = (b: Uint8Array | null | undefined) => Buffer.from(b ?? new Uint8Array()).toString('base64');
  return { metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, b64(v)])), data: b64(p.data) };
}
