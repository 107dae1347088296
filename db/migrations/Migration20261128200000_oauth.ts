import { Migration } from '@mikro-orm/migrations';

/**
 * OAuth 2.0 connect and the token lifecycle (issue 29): integrations gain what a client may see
 * of the grant (status `reauth_required`, scopes, handle, expiries; never a token), and
 * `oauth_states` holds one pending authorization per row: the PKCE verifier (encrypted) stays
 * server-side, the row is deleted when the callback consumes it (single use). `oauth_apps`
 * holds a workspace's own app credentials ("bring your own app"), the secret encrypted.
 */
export class Migration20261128200000_oauth extends Migration {
  override name = 'Migration20261128200000_oauth';

  override up(): void {
    this.addSql(`alter table integrations drop constraint integrations_status_check`);
    this.addSql(`alter table integrations add constraint integrations_status_check check (status in ('connected','reauth_required','disconnected'))`);
    this.addSql(`alter table integrations
      add column scopes text[] not null default '{}',
      add column handle text,
      add column access_expires_at timestamptz,
      add column grant_expires_at timestamptz`);
    this.addSql(`create index integrations_ws_account on integrations(workspace_id, provider, external_account_id)`);
    this.addSql(`create table oauth_states (
      id uuid primary key,
      workspace_id uuid not null references workspaces(id) on delete cascade,
      provider text not null check (provider in ('microblog','pronet','pronetPage')),
      app_source text not null check (app_source in ('operator','workspace')),
      code_verifier_encrypted text not null,
      redirect_uri text not null,
      expires_at timestamptz not null,
      created_at timestamptz not null default now())`);
    this.addSql(`create index oauth_states_ws_expires on oauth_states(workspace_id, expires_at)`);
    this.addSql(`create table oauth_apps (
      workspace_id uuid not null references workspaces(id) on delete cascade,
      network text not null check (network in ('microblog','pronet')),
      client_id text not null,
      client_secret_encrypted text not null,
      created_at timestamptz not null default now(),
      primary key (workspace_id, network))`);
    // Tenancy enforced by PostgreSQL (Migration20261128100000_row_level_security).
    this.addSql(`select app_enable_workspace_rls('oauth_states')`);
    this.addSql(`select app_enable_workspace_rls('oauth_apps')`);
  }

  override down(): void {
    this.addSql(`drop table oauth_apps`);
    this.addSql(`drop table oauth_states`);
    this.addSql(`drop index integrations_ws_account`);
    this.addSql(`alter table integrations drop column scopes, drop column handle, drop column access_expires_at, drop column grant_expires_at`);
    this.addSql(`update integrations set status = 'disconnected', credentials_encrypted = '' where status = 'reauth_required'`);
    this.addSql(`alter table integrations drop constraint integrations_status_check`);
    this.addSql(`alter table integrations add constraint integrations_status_check check (status in ('connected','disconnected'))`);
  }
}
