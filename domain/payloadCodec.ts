/**
 * The Temporal payload codec: every payload the API, the scripts and the worker hand to Temporal
 * (workflow and activity inputs and results, query answers, memos, signals) is sealed with the
 * keyring (`domain/keyring.ts`, AES-256-GCM) before it leaves the process, so webhook headers,
 * integration credentials and contact data are opaque to anyone who can read Temporal's database
 * or UI but not the key.
 *
 * A sealed payload: metadata `encoding: binary/encrypted` and `encryption-key-id: <id>`; data
 * the keyring's binary form (iv | tag | ciphertext) of the original payload's protobuf bytes,
 * bound to the context `temporal-payload`. Decoding picks the key by its id, so payloads sealed
 * before a rotation open with `ENCRYPTION_PREVIOUS_KEYS` while new ones use the current key.
 * Payloads without that encoding pass through untouched: histories recorded before the codec
 * existed still replay.
 */
import { fileURLToPath } from 'node:url';
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import protoPackage from '@temporalio/proto';
import type { Config } from './config.js';
import { keyringOf, type Keyring } from './keyring.js';

// A CommonJS module: its namespaces come through the default export under Node's ESM loader.
const { Payload: PayloadProto } = protoPackage.temporal.api.common.v1;

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';
/** Additional authenticated data: a value sealed for another use never opens as a payload. */
const CONTEXT = 'temporal-payload';

const utf8 = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | null | undefined) => (b ? Buffer.from(b).toString('utf8') : '');

export class EncryptionCodec implements PayloadCodec {
  constructor(private readonly keyring: Keyring) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const sealed = this.keyring.seal(PayloadProto.encode(payload).finish(), CONTEXT);
      return { metadata: { encoding: utf8(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: utf8(sealed.keyId) }, data: sealed.data };
    });
  }

  /** Throws `KeyringError` for a payload sealed with a key this process lacks, or altered. */
  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (text(payload.metadata?.encoding) !== ENCRYPTED_ENCODING) return payload;
      const keyId = text(payload.metadata?.[KEY_ID_METADATA]);
      return PayloadProto.decode(this.keyring.open({ keyId, data: Buffer.from(payload.data ?? new Uint8Array()) }, CONTEXT));
    });
  }
}

/** The codec of every Temporal client and worker of this service (`ENCRYPTION_KEY`, `ENCRYPTION_PREVIOUS_KEYS`). */
export function createPayloadCodec(config: Pick<Config, 'encryptionKey' | 'previousEncryptionKeys'>): EncryptionCodec {
  return new EncryptionCodec(keyringOf(config));
}

/** The module exporting the failure converter (domain/failureConverter.ts, or its compiled .js). */
export const FAILURE_CONVERTER_PATH = fileURLToPath(new URL(`./failureConverter.${import.meta.url.endsWith('.js') ? 'js' : 'ts'}`, import.meta.url));

/**
 * The data converter of every Temporal client and worker: payloads sealed by the codec, and
 * failures' messages and stack traces encoded as a payload (so sealed too). Workflow bundles
 * take `FAILURE_CONVERTER_PATH` as their `failureConverterPath`.
 */
export function dataConverterOf(config: Pick<Config, 'encryptionKey' | 'previousEncryptionKeys'>): DataConverter {
  return { payloadCodecs: [createPayloadCodec(config)], failureConverterPath: FAILURE_CONVERTER_PATH };
}
