/**
 * OAuth 2.0 connect (issue 29): `POST /integrations/oauth/authorize` answers the network's consent
 * URL for the workspace; the network sends the member's browser back to
 * `GET /integrations/oauth/callback`, which exchanges the code and creates the integration, or
 * reconnects the workspace's integration of the same external account (same `id`). The
 * callback carries no API key: the workspace comes from the signed `state`
 * (domain/oauthState.ts), whose pending row (db/oauth.ts) is single-use and holds the PKCE
 * verifier, which never leaves the server. `pronetPage`: the member connects, then picks one of
 * the pages they administer (`POST /integrations/{id}/pages`). Workspaces may register their own
 * app per network (`/integrations/oauth/apps`); otherwise the operator's (environment) is used.
 */
import { v7 as uuidv7 } from 'uuid';
import { connectOAuthIntegration, findConnectedIntegration, publishingAccount } from '../../db/integrations.js';
import { consumeOAuthState, deleteOAuthApp, insertOAuthState, listOAuthApps, upsertOAuthApp } from '../../db/oauth.js';
import { inWorkspaceScope, useWorkspace } from '../../db/tenancy.js';
import { decryptCredentials, encryptCredentials } from '../../domain/credentials.js';
import { badRequest } from '../../domain/errors.js';
import { keyringOf } from '../../domain/keyring.js';
import { OAUTH_STATE_TTL_MS, signOAuthState, verifyOAuthState } from '../../domain/oauthState.js';
import { isUuid } from '../../domain/social.js';
import {
  OAuthError,
  administeredOrganizations,
  authorizationUrl,
  exchangeCode,
  fetchIdentity,
  integrationBaseUrl,
  oauthEndpoints,
  oauthNetworkOf,
  oauthRedirectUri,
  pkcePair,
} from '../../infra/oauth.js';
import { resolveOAuthApp } from '../../infra/oauthApps.js';
import { oauthAppContext } from '../../db/secrets.js';
import { entityJson } from '../entityJson.js';
import { ApiError, notFound } from '../errors.js';
import { defineRoute } from '../route.js';
import { IdParams } from '../schemas/common.js';
import { Integration } from '../schemas/integrations.js';
import {
  AuthorizationResponse,
  AuthorizeBody,
  CallbackQuery,
  ConnectPageBody,
  ConnectedResponse,
  NetworkParams,
  OAuthApp,
  OAuthAppBody,
  OAuthAppDeleted,
  OAuthAppList,
  OAuthAppResponse,
} from '../schemas/oauth.js';
import { IntegrationResponse } from '../schemas/integrations.js';

const stateInvalid = () => badRequest('oauth_state_invalid', 'state is missing, forged, expired or already used; start again with POST /integrations/oauth/authorize', [{ path: '/state', message: 'is not a valid pending authorization' }]);

/** A network's failure during connect, as the API answers it (never a 5xx for the client's own mistake). */
function connectFailure(e: unknown): unknown {
  if (!(e instanceof OAuthError)) return e;
  if (e.kind === 'invalid_grant') return badRequest('oauth_code_invalid', `the network refused the authorization code (${e.message}); start again`);
  if (e.kind === 'transient') return new ApiError(502, 'provider_unavailable', `the network did not answer usably (${e.message}); try again`);
  return new ApiError(502, 'oauth_provider_refused', `the network refused the request (${e.message}); check the OAuth app's configuration`);
}

export const oauthRoutes = [
  defineRoute({
    method: 'post',
    path: '/integrations/oauth/authorize',
    tag: 'Integrations',
    summary: 'Start connecting an account through OAuth',
    description:
      "Answers the network's consent URL. Send the member's browser there; the network redirects it to the callback, which connects the account. `state` is signed, bound to this workspace, single-use and valid 10 minutes; the PKCE verifier (X) stays on the server.",
    body: AuthorizeBody,
    responses: { 200: AuthorizationResponse },
    errors: [400, 401, 500], errorCodes: ['oauth_app_not_configured'],
    handler: async ({ body, auth, em, deps }) => {
      const network = oauthNetworkOf(body.provider);
      const keyring = keyringOf(deps.config);
      const app = await resolveOAuthApp(em, keyring, deps.config.env, auth.workspaceId, network);
      if (!app) {
        throw badRequest('oauth_app_not_configured', `no OAuth app is configured for ${body.provider}: the operator sets ${network === 'microblog' ? 'X' : 'LINKEDIN'}_CLIENT_ID and _CLIENT_SECRET, or the workspace registers its own (PUT /integrations/oauth/apps/${network})`, [
          { path: '/provider', message: 'has no OAuth app configured' },
        ]);
      }
      const id = uuidv7();
      const expiresAt = new Date(Date.now() + OAUTH_STATE_TTL_MS);
      const redirectUri = oauthRedirectUri(deps.config.env, deps.config.publicBaseUrl);
      const pkce = network === 'microblog' ? pkcePair() : null;
      await insertOAuthState(em, {
        id,
        workspaceId: auth.workspaceId,
        provider: body.provider,
        appSource: app.source,
        codeVerifierEncrypted: keyring.encryptText(pkce?.verifier ?? '', `oauth-state:${id}`),
        redirectUri,
        expiresAt,
      });
      const state = signOAuthState(deps.config.serverSecret, { id, workspaceId: auth.workspaceId, provider: body.provider, exp: expiresAt.getTime() });
      const url = authorizationUrl({ provider: body.provider, endpoints: oauthEndpoints(network, deps.config.env), app, redirectUri, state, challenge: pkce?.challenge ?? null });
      return { data: { authorizationUrl: url, expiresAt: expiresAt.toISOString() } };
    },
  }),

  defineRoute({
    method: 'get',
    path: '/integrations/oauth/callback',
    tag: 'Integrations',
    summary: 'OAuth callback (the network redirects here)',
    description:
      'Takes no API key: the workspace is the one the signed `state` names. Exchanges `code`, reads the account (X `GET /2/users/me`, LinkedIn OpenID `userinfo`) and creates the integration, or reconnects the existing one of the same account (same `id`; scheduled posts keep their `providerId`). For `pronetPage` it connects the member and lists the pages they administer.',
    query: CallbackQuery,
    auth: false,
    responses: { 200: ConnectedResponse },
    errors: [400, 502, 500], errorCodes: ['oauth_state_invalid', 'oauth_denied', 'oauth_app_not_configured'],
    handler: async ({ query, em, deps, ctx }) => {
      const payload = query.state ? verifyOAuthState(deps.config.serverSecret, query.state) : null;
      if (!payload) throw stateInvalid();
      ctx.state.workspaceId = payload.workspaceId;
      useWorkspace(em, payload.workspaceId);
      // No API key here: the verified state names the workspace, and row-level security scopes to it.
      return inWorkspaceScope(payload.workspaceId, async () => {
        const pending = await consumeOAuthState(em, payload.id);
        if (!pending || pending.provider !== payload.provider) throw stateInvalid();
        if (query.error) throw badRequest('oauth_denied', `the network ended the authorization: ${query.error}${query.error_description ? ` (${query.error_description.slice(0, 200)})` : ''}`);
        if (!query.code) throw badRequest('validation_failed', '/code: is required', [{ path: '/code', message: 'is required' }]);
        const network = oauthNetworkOf(pending.provider);
        const keyring = keyringOf(deps.config);
        const app = await resolveOAuthApp(em, keyring, deps.config.env, payload.workspaceId, network, pending.appSource);
        if (!app) throw badRequest('oauth_app_not_configured', `the OAuth app this authorization started with is no longer configured for ${pending.provider}`);
        const endpoints = oauthEndpoints(network, deps.config.env);
        const allowList = deps.config.outboundAllowList;
        const verifier = keyring.decryptText(pending.codeVerifierEncrypted, `oauth-state:${pending.id}`) || null;
        let tokens, who, organizations;
        try {
          tokens = await exchangeCode(network, app, endpoints, { code: query.code, redirectUri: pending.redirectUri, verifier }, allowList);
          who = await fetchIdentity(network, endpoints, tokens.accessToken, allowList);
          if (pending.provider === 'pronetPage') organizations = await administeredOrganizations(endpoints, tokens.accessToken, allowList);
        } catch (e) {
          throw connectFailure(e);
        }
        // pronetPage: the member's own account is connected first (as `pronet`); a page is picked next.
        const provider = pending.provider === 'pronetPage' ? 'pronet' : pending.provider;
        const { integration, reconnected } = await connectOAuthIntegration(
          em,
          payload.workspaceId,
          {
            provider,
            externalAccountId: who.id,
            name: who.name,
            handle: who.handle,
            scopes: tokens.scopes.length ? tokens.scopes : [],
            accessExpiresAt: tokens.accessExpiresAt,
            grantExpiresAt: tokens.grantExpiresAt,
            apiBaseUrl: integrationBaseUrl(network, deps.config.env),
          },
          (integrationId) => encryptCredentials({ accessToken: tokens.accessToken, refreshToken: tokens.refreshToken ?? null, app: app.source }, keyring, integrationId),
        );
        return { data: { integration: entityJson(Integration, integration), reconnected, ...(organizations ? { organizations } : {}) } };
      });
    },
  }),

  defineRoute({
    method: 'post',
    path: '/integrations/{id}/pages',
    tag: 'Integrations',
    summary: 'Connect a LinkedIn page the member administers',
    description:
      'Creates (or reconnects) the `pronetPage` integration of one organization the member of `pronet` integration `id` administers, acting with that member\'s grant (connected with provider `pronetPage`, which asks for the organization scopes).',
    params: IdParams,
    body: ConnectPageBody,
    responses: { 200: IntegrationResponse },
    errors: [400, 401, 404, 502, 500], errorCodes: ['oauth_scope_missing'],
    handler: async ({ params, body, auth, em, deps }) => {
      const member = isUuid(params.id) ? await findConnectedIntegration(em, params.id) : null;
      if (!member || member.provider !== 'pronet') throw notFound('pronet integration', params.id);
      const full = (await publishingAccount(em, member.id))!;
      if (member.status !== 'connected' || !full.credentialsEncrypted) throw badRequest('integration_reauth_required', `integration ${member.id} must be reconnected first`);
      const keyring = keyringOf(deps.config);
      const creds = decryptCredentials(full.credentialsEncrypted, keyring, member.id);
      const endpoints = oauthEndpoints('pronet', deps.config.env);
      let orgs;
      try {
        orgs = await administeredOrganizations(endpoints, String(creds.accessToken), deps.config.outboundAllowList);
      } catch (e) {
        if (e instanceof OAuthError && e.opts.status === 403) throw badRequest('oauth_scope_missing', 'the member did not grant the organization scopes: connect with provider pronetPage');
        throw connectFailure(e);
      }
      const org = orgs.find((o) => o.id === body.organizationId);
      if (!org) throw badRequest('validation_failed', `/organizationId: the member does not administer organization ${body.organizationId}`, [{ path: '/organizationId', message: 'is not a page the member administers' }]);
      const { integration } = await connectOAuthIntegration(
        em,
        auth.workspaceId,
        {
          provider: 'pronetPage',
          externalAccountId: org.id,
          name: org.name,
          handle: null,
          scopes: member.scopes,
          accessExpiresAt: member.accessExpiresAt ?? null,
          grantExpiresAt: member.grantExpiresAt ?? null,
          apiBaseUrl: member.apiBaseUrl ?? null,
        },
        // LinkedIn does not rotate refresh tokens, so the page may hold a copy of the member's grant.
        (integrationId) => encryptCredentials(creds, keyring, integrationId),
      );
      return { data: entityJson(Integration, integration) };
    },
  }),

  defineRoute({
    method: 'get',
    path: '/integrations/oauth/apps',
    tag: 'Integrations',
    summary: "List the workspace's own OAuth apps",
    responses: { 200: OAuthAppList },
    errors: [401, 500],
    handler: async ({ em }) => ({ data: (await listOAuthApps(em)).map((a) => entityJson(OAuthApp, a)) }),
  }),

  defineRoute({
    method: 'put',
    path: '/integrations/oauth/apps/{network}',
    tag: 'Integrations',
    summary: "Register the workspace's own OAuth app for a network",
    description:
      'Connects of this workspace use this app instead of the operator\'s ("bring your own app"). The client secret is encrypted at rest and never returned. Register the redirect URL the operator configured (`OAUTH_REDIRECT_URL`) with the app on the network.',
    params: NetworkParams,
    body: OAuthAppBody,
    responses: { 200: OAuthAppResponse },
    errors: [400, 401, 500],
    handler: async ({ params, body, auth, em, deps }) => {
      const sealed = keyringOf(deps.config).encryptText(body.clientSecret, oauthAppContext(auth.workspaceId, params.network));
      const row = await upsertOAuthApp(em, auth.workspaceId, { network: params.network, clientId: body.clientId, clientSecretEncrypted: sealed });
      return { data: entityJson(OAuthApp, row) };
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/integrations/oauth/apps/{network}',
    tag: 'Integrations',
    summary: "Remove the workspace's own OAuth app for a network",
    description: "New connects use the operator's app again. Accounts connected with the removed app need reconnecting once their token must be refreshed.",
    params: NetworkParams,
    responses: { 200: OAuthAppDeleted },
    errors: [401, 404, 500],
    handler: async ({ params, em }) => {
      if (!(await deleteOAuthApp(em, params.network))) throw notFound('OAuth app', params.network);
      return { data: { network: params.network, deleted: true as const } };
    },
  }),
];
