import { describe, expect, it } from 'vitest';
import { defaultPayloadConverter } from '@temporalio/common';
import { createKeyring, KeyringError } from '../../domain/keyring.js';
import { EncryptionCodec, ENCRYPTED_ENCODING, KEY_ID_METADATA } from '../../domain/payloadCodec.js';

const text = (b: Uint8Array | null | undefined) => Buffer.from(b ?? []).toString('utf8');
const OLD = 'old-secret-old-secret-old-secret-0';
const NEW = 'new-secret-new-secret-new-secret-1';

describe('payload codec', () => {
  const value = { webhook: { headers: { Authorization: 'Bearer caller-secret' } } };
  const payload = defaultPayloadConverter.toPayload(value);

  it('seals a payload under the current key id and opens it again', async () => {
    const ring = createKeyring(NEW);
    const codec = new EncryptionCodec(ring);
    const [sealed] = await codec.encode([payload]);
    expect(text(sealed!.metadata!.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(text(sealed!.metadata![KEY_ID_METADATA])).toBe(ring.currentKeyId);
    expect(Buffer.from(sealed!.data!).includes('caller-secret')).toBe(false);
    const [opened] = await codec.decode([sealed!]);
    expect(defaultPayloadConverter.fromPayload(opened!)).toEqual(value);
  });

  it('rotates: a new current key seals, the previous key still opens what it sealed', async () => {
    const old = new EncryptionCodec(createKeyring(OLD));
    const rotated = new EncryptionCodec(createKeyring(NEW, [OLD]));
    const [byOld] = await old.encode([payload]);
    const [byNew] = await rotated.encode([payload]);
    expect(text(byNew!.metadata![KEY_ID_METADATA])).not.toBe(text(byOld!.metadata![KEY_ID_METADATA]));
    expect(defaultPayloadConverter.fromPayload((await rotated.decode([byOld!]))[0]!)).toEqual(value);
    // A process without the new key cannot open what it sealed.
    await expect(old.decode([byNew!])).rejects.toBeInstanceOf(KeyringError);
  });

  it('passes unsealed payloads through (histories from before the codec) and refuses altered ones', async () => {
    const ring = createKeyring(NEW);
    const codec = new EncryptionCodec(ring);
    expect(await codec.decode([payload])).toEqual([payload]);
    const [sealed] = await codec.encode([payload]);
    const data = Buffer.from(sealed!.data!);
    data[data.length - 1]! ^= 0x01;
    await expect(codec.decode([{ ...sealed!, data }])).rejects.toBeInstanceOf(KeyringError);
    // Bound to its use: a value the keyring sealed for something else does not open as a payload.
    const credential = ring.seal(Buffer.from('{}'), 'integration-1');
    await expect(codec.decode([{ metadata: sealed!.metadata, data: credential.data }])).rejects.toBeInstanceOf(KeyringError);
  });
});
