/**
 * The API's checks of URL fields a client sends (webhook targets, media imports, an integration's
 * `apiBaseUrl`): the outbound guard of `infra/outbound.ts`, refused as a 400 `url_not_allowed`
 * naming the field.
 */
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
