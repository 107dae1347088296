/**
 * The API's checks of URL fields a client sends (webhook targets, media imports, an integration's
 * `apiBaseUrl`): the outbound guard of `infra/outbound.ts`, refused as a 400 `url_not_allowed`
 * naming the field.
 */
import { escapePointer, invalidField } from '../domain/errors.js';
import { ApiError } from './errors.js';
import { OutboundBlockedError, checkOutboundUrl, providerBaseUrlAllowList, providerBaseUrlAllowed } from '../infra/outbound.js';

/** API-side check of an integration's `apiBaseUrl`: allow-listed by the operator and reachable. */
export async function assertProviderBaseUrl(raw: string, env: NodeJS.ProcessEnv, outboundAllowList: string[], field: string): Promise<void> {
  if (!providerBaseUrlAllowed(raw, providerBaseUrlAllowList(env))) {
    const message = 'is not an API base URL this service allows (PROVIDER_BASE_URL_ALLOW_LIST)';
    throw new ApiError(400, 'url_not_allowed', `${field}: ${message}`, [{ path: field, message }]);
  }
  await assertOutboundUrl(raw, outboundAllowList, field);
}

/** API-side check of a URL field: 400 naming the field. */
export async function assertOutboundUrl(raw: string, allowList: string[], field: string): Promise<void> {
  try {
    await checkOutboundUrl(raw, allowList);
  } catch (e) {
    if (e instanceof OutboundBlockedError) throw new ApiError(400, 'url_not_allowed', `${field}: ${e.message}`, [{ path: field, message: e.message }]);
    throw e;
  }
}

/**
 * API-side check of a job's `webhookConfiguration` (its shape is the schema's): the URL as
 * `assertOutboundUrl`, and header names that differ in more than case — HTTP names are
 * case-insensitive, so of `X-A` and `x-a` only one would be sent.
 */
export async function assertWebhookConfiguration(webhook: { url: string; headers?: Record<string, string> } | undefined, allowList: string[]): Promise<void> {
  if (!webhook) return;
  const names = new Map<string, string>();
  for (const name of Object.keys(webhook.headers ?? {})) {
    const earlier = names.get(name.toLowerCase());
    if (earlier !== undefined) throw invalidField(`/webhookConfiguration/headers/${escapePointer(name)}`, `names the same header as ${earlier} (header names are case-insensitive)`);
    names.set(name.toLowerCase(), name);
  }
  await assertOutboundUrl(webhook.url, allowList, '/webhookConfiguration/url');
}
