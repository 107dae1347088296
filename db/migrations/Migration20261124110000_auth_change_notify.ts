import { Migration } from '@mikro-orm/migrations';

/**
 * API processes cache authenticated contexts (key hash → workspace, kind, plan); every change to
 * a key or a workspace NOTIFYs `auth_changed` so each replica drops what it cached, whoever made
 * the change (API, admin CLI `key:revoke`, a plain SQL update). Payloads: `key:<key_hash>`,
 * `workspace:<id>`, or `*` (a TRUNCATE: drop everything). The rate-limit windows moved into the
 * API processes' memory; their table goes.
 */
export class Migration20261124110000_auth_change_notify extends Migration {
  override name = 'Migration20261124110000_auth_change_notify';

  override up(): void {
    this.addSql(`create function notify_auth_changed() returns trigger language plpgsql as $$
      begin
        if tg_op = 'TRUNCATE' then
          perform pg_notify('auth_changed', '*');
        elsif tg_table_name = 'api_keys' then
          perform pg_notify('auth_changed', 'key:' || old.key_hash);
        else
          perform pg_notify('auth_changed', 'workspace:' || old.id::text);
        end if;
        return null;
      end $$`);
    this.addSql(`create trigger api_keys_auth_changed after update or delete on api_keys for each row execute function notify_auth_changed()`);
    this.addSql(`create trigger api_keys_auth_truncated after truncate on api_keys for each statement execute function notify_auth_changed()`);
    this.addSql(`create trigger workspaces_auth_changed after update or delete on workspaces for each row execute function notify_auth_changed()`);
    this.addSql(`create trigger workspaces_auth_truncated after truncate on workspaces for each statement execute function notify_auth_changed()`);
    this.addSql(`drop table rate_limit_windows`);
  }
}
