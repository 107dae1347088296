/** Custom contact field definitions (`custom_field_definitions`); read with the catalog in db/contactRead.ts. */
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { CustomFieldType } from '../domain/contactCatalog.js';
import { CustomFieldDefinition } from './contacts.js';
import type { WorkspaceScope } from './scope.js';

/** Creates the field; false (nothing written) when the workspace already has a field with this label. */
export async function insertCustomField(
  { em, workspaceId }: WorkspaceScope,
  field: { id: string; label: string; type: CustomFieldType; options: { label: string; value: unknown }[] | null | undefined },
): Promise<boolean> {
  try {
    // A single insert (no unit of work to clean up when the label is taken).
    await em.insert(CustomFieldDefinition, { ...field, workspaceId, options: field.options ?? null, createdAt: new Date() });
    return true;
  } catch (e) {
    if (e instanceof UniqueConstraintViolationException) return false;
    throw e;
  }
}
