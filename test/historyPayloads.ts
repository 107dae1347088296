/**
 * The payloads of a workflow history, decoded through the project's payload codec, as text: what
 * the privacy tests scan for a person's identifiers.
 */
import { ENCRYPTED_ENCODING, EncryptionCodec, createPayloadCodec } from '../domain/payloadCodec.js';
import { createKeyring } from '../domain/keyring.js';
import { DEV_SECRETS, type Config } from '../domain/config.js';
import type { TestApp } from './harness.js';

export async function decodedHistoryTexts(app: TestApp, workflowId: string, runId?: string): Promise<string[]> {
  const codec = createPayloadCodec(app.config);
  const history = await app.deps.temporal.workflow.getHandle(workflowId, runId).fetchHistory();
  const texts: string[] = [];
  const stack: unknown[] = [history];
  while (stack.length) {
    const v = stack.pop();
    if (!v || typeof v !== 'object' || ArrayBuffer.isView(v)) continue;
    const o = v as Record<string, unknown>;
    if (o.data instanceof Uint8Array && o.metadata) {
      const [p] = await codec.decode([o as never]);
      texts.push(Buffer.from(p!.data ?? new Uint8Array()).toString('utf8'));
      continue;
    }
    stack.push(...(Array.isArray(v) ? v : Object.values(o)));
  }
  return texts;
}

/**
 * A recorded history (the CLI's JSON) with every sealed payload re-sealed under the development
 * key (`DEV_SECRETS.ENCRYPTION_KEY`): the replay test of any installation opens it with that key
 * (test/replay/replay.test.ts), whatever key this installation generated for itself.
 */
export async function resealedForReplay(historyJson: string, recordedWith: Pick<Config, 'encryptionKey' | 'previousEncryptionKeys'>): Promise<string> {
  const from = createPayloadCodec(recordedWith);
  const to = new EncryptionCodec(createKeyring(DEV_SECRETS.ENCRYPTION_KEY));
  const history = JSON.parse(historyJson) as unknown;
  const stack: unknown[] = [history];
  while (stack.length) {
    const v = stack.pop();
    if (!v || typeof v !== 'object') continue;
    const o = v as Record<string, unknown>;
    const metadata = o.metadata as Record<string, string> | undefined;
    if (metadata && typeof metadata === 'object' && typeof metadata.encoding === 'string' && typeof o.data === 'string') {
      if (Buffer.from(metadata.encoding, 'base64').toString('utf8') !== ENCRYPTED_ENCODING) continue;
      const asBytes = (m: Record<string, string>) => Object.fromEntries(Object.entries(m).map(([k, b64]) => [k, new Uint8Array(Buffer.from(b64, 'base64'))]));
      const [open] = await from.decode([{ metadata: asBytes(metadata), data: new Uint8Array(Buffer.from(o.data, 'base64')) }]);
      const [sealed] = await to.encode([open!]);
      o.metadata = Object.fromEntries(Object.entries(sealed!.metadata ?? {}).map(([k, b]) => [k, Buffer.from(b as Uint8Array).toString('base64')]));
      o.data = Buffer.from(sealed!.data ?? new Uint8Array()).toString('base64');
      continue;
    }
    stack.push(...(Array.isArray(v) ? v : Object.values(o)));
  }
  return JSON.stringify(history, null, 2) + '\n';
}
