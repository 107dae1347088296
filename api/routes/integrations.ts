/**
 * Integrations: connected social accounts (`microblog`, `pronet`, `pronetPage`). Credentials are
 * encrypted with AES-256-GCM before they reach the database and are never part of a response.
 * DELETE disconnects: the row stays (posts keep their `providerId`), the credentials are erased
 * and the integration disappears from reads and lists.
 */
import { v7 as uuidv7 } from 'uuid';
import { disconnectIntegration, findConnectedIntegration, insertIntegration } from '../../db/integrations.js';
import { integrationJson, listIntegrations } from '../usecases/listIntegrations.js';
import { assertProviderBaseUrl } from '../outboundUrls.js';
import { encryptCredentials } from '../../domain/credentials.js';
import { keyringOf } from '../../domain/keyring.js';
import { notFound } from '../errors.js';
import { isUuid } from '../../domain/social.js';
import { defineRoute } from '../route.js';
import { IdParams } from '../schemas/common.js';
import {
  ConnectIntegrationBody,
  FilterIntegrationsBody,
  IntegrationDeleted,
  IntegrationPage,
  IntegrationResponse,
} from '../schemas/integrations.js';

export const integrationRoutes = [
  defineRoute({
    method: 'post',
    path: '/integrations',
    tag: 'Integrations',
    summary: 'Connect a social account',
    description: 'Stores the account and its credentials (encrypted at rest, never returned). The returned `id` is the `providerId` for posts.',
    body: ConnectIntegrationBody,
    responses: { 200: IntegrationResponse },
    errors: [400, 401, 500], errorCodes: ['url_not_allowed'],
    idempotent: true,
    handler: async ({ body, scope, deps }) => {
      // The adapters call this URL with the account's token: only what the operator allows
      // (PROVIDER_BASE_URL_ALLOW_LIST, by default the networks' official hosts), on an allowed address.
      if (body.apiBaseUrl) await assertProviderBaseUrl(body.apiBaseUrl, deps.config.env, deps.config.outboundAllowList, '/apiBaseUrl');
      const id = uuidv7();
      const blob = encryptCredentials(body.credentials, keyringOf(deps.config), id);
      const row = await insertIntegration(scope, {
        id,
        provider: body.provider,
        name: body.name,
        externalAccountId: body.externalAccountId,
        credentialsEncrypted: blob,
        apiBaseUrl: body.apiBaseUrl ?? null,
      });
      return { data: integrationJson(row) };
    },
  }),

  defineRoute({
    method: 'post',
    path: '/integrations/filter-integrations',
    tag: 'Integrations',
    summary: 'List connected social accounts',
    description:
      'Returns the connected `microblog`, `pronet` and `pronetPage` accounts of the workspace, oldest first. Conditions (ANDed) take `==` or `IN` on `provider`, `externalAccountId` or `name`.',
    body: FilterIntegrationsBody,
    responses: { 200: IntegrationPage },
    errors: [400, 401, 500],
    handler: ({ body, scope, deps }) => listIntegrations(scope, deps.config.serverSecret, body),
  }),

  defineRoute({
    method: 'get',
    path: '/integrations/{id}',
    tag: 'Integrations',
    summary: 'Get a connected account',
    params: IdParams,
    responses: { 200: IntegrationResponse },
    errors: [401, 404, 500],
    handler: async ({ params, scope }) => {
      const row = isUuid(params.id) ? await findConnectedIntegration(scope.em, params.id) : null;
      if (!row) throw notFound('Integration', params.id);
      return { data: integrationJson(row) };
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/integrations/{id}',
    tag: 'Integrations',
    summary: 'Disconnect an account',
    description: 'Erases the credentials and marks the account disconnected; it no longer appears in reads or lists and cannot publish.',
    params: IdParams,
    responses: { 200: IntegrationDeleted },
    errors: [401, 404, 500],
    handler: async ({ params, scope }) => {
      const disconnected = isUuid(params.id) && (await disconnectIntegration(scope.em, params.id));
      if (!disconnected) throw notFound('Integration', params.id);
      return { data: { id: params.id, deleted: true as const } };
    },
  }),
];
