/**
 * The payloads of a workflow history, decoded through the project's payload codec, as text: what
 * the privacy tests scan for a person's identifiers.
 */
import { createPayloadCodec } from '../domain/payloadCodec.js';
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
