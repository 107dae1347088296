/** Custom contact field definitions (`custom_field_definitions`); read with the catalog in db/contactRead.ts. */
import type { Queryable } from './pool.js';

/** Rejects with PostgreSQL's unique violation (23505) when the workspace already has a field with this label. */
export async function insertCustomField(
  db: Queryable,
  field: { id: string; workspaceId: string; label: string; type: string; options: unknown[] | null | undefined },
): Promise<void> {
  await db.query(
    `insert into custom_field_definitions (id, workspace_id, label, type, options, created_at) values ($1, $2, $3, $4, $5, now())`,
    [field.id, field.workspaceId, field.label, field.type, field.options ? JSON.stringify(field.options) : null],
  );
}
