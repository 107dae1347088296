import { Migration } from '@mikro-orm/migrations';

/** Rows compacted per statement. */
const BATCH = 500;

/**
 * `Idempotency-Key` replays answer the first response verbatim (docs/social-core.md): the stored
 * body becomes the JSON text that was sent (`text`), where `jsonb` normalised it (keys reordered
 * by length, spaces added) and a replay sent it re-serialised in that order.
 *
 * Existing rows cannot get their first bytes back; each keeps exactly the bytes its replays sent
 * so far. `jsonb::text` spaces its separators (`{"a": 1}`), so the rows that can still be
 * replayed (a record counts for 24 h, db/idempotency.ts; 25 h here for clock skew) are rewritten
 * as `JSON.stringify` of the parsed value — what the API sent for them before — in batches;
 * older rows, never replayed again, keep the plain cast.
 */
export class Migration20261126100000_idempotency_body_text extends Migration {
  override name = 'Migration20261126100000_idempotency_body_text';

  override async up(): Promise<void> {
    await this.execute(`alter table idempotency_records alter column response_body type text using response_body::text`);
    const rows = (await this.execute(
      `select workspace_id, idempotency_key, response_body from idempotency_records
        where response_body is not null and created_at > now() - interval '25 hours'`,
    )) as Array<{ workspace_id: string; idempotency_key: string; response_body: string }>;
    for (let i = 0; i < rows.length; i += BATCH) {
      const batch = rows.slice(i, i + BATCH).map((r) => ({ w: r.workspace_id, k: r.idempotency_key, b: JSON.stringify(JSON.parse(r.response_body)) }));
      await this.execute(
        `update idempotency_records r set response_body = x.b
          from jsonb_to_recordset(?::jsonb) as x(w uuid, k text, b text)
          where r.workspace_id = x.w and r.idempotency_key = x.k`,
        [JSON.stringify(batch)],
      );
    }
  }
}
