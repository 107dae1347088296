import { Migration } from '@mikro-orm/migrations';

/**
 * A provider step is owned by one activity attempt at a time: a retry (e.g. after a heartbeat
 * timeout) takes the step over, and an older attempt still running finds it no longer owns the
 * step and does not send.
 */
export class Migration20261121062000_publish_attempt_owner extends Migration {
  override name = 'Migration20261121062000_publish_attempt_owner';

  override up(): void {
    this.addSql(`alter table publish_attempts drop constraint if exists publish_attempts_state_check`);
    this.addSql(`alter table publish_attempts add constraint publish_attempts_state_check check (state in ('pending','sending','done','failed'))`);
    this.addSql(`alter table publish_attempts add column owner_attempt int not null default 0`);
  }
}
