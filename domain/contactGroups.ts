/** Grouping the rows of one ingest batch (db/contactIngest.ts) that are the same person. */
import type { ContactInput } from './contactMapping.js';
import { WRITABLE_CONTACT_KEYS, type ContactTextKey } from './contactShape.js';

/** Rows of one batch that are the same person, merged; the fields are those of a ContactInput. */
export interface ContactGroup extends Omit<ContactInput, 'rowKey' | 'emails'> {
  first: number;
  members: number[];
  /** Distinct; a row key belongs to one group. */
  rowKeys: string[];
  emails: string[];
  contactId?: string;
  isNew?: boolean;
  skip?: boolean;
  companyId?: string;
  mergedInto?: ContactGroup;
}

/** The text properties a row carries: the Contact's written ones (domain/contactShape.ts) and the profile key. */
const SCALARS: (ContactTextKey | 'pronetKey')[] = [...WRITABLE_CONTACT_KEYS.filter((k): k is ContactTextKey => k !== 'emails'), 'pronetKey'];

export function absorb(g: ContactGroup, x: Partial<ContactGroup> & { emails?: string[] }): void {
  for (const k of SCALARS) if (x[k] !== undefined) g[k] = x[k];
  // Copies only when merging: the first row of a group lends its values (they are never mutated).
  if (x.emails?.length) g.emails = g.emails.length ? [...new Set([...g.emails, ...x.emails])] : x.emails;
  if (x.customFields) g.customFields = g.customFields ? { ...g.customFields, ...x.customFields } : x.customFields;
  if (x.company) g.company = g.company ? { ...g.company, ...x.company } : x.company;
  if (x.origin) g.origin = x.origin;
}

/** Groups the rows of one batch that are the same person (same precedence as the database match). */
export function groupRows(inputs: ContactInput[]): ContactGroup[] {
  const groups: ContactGroup[] = [];
  const byPronet = new Map<string, ContactGroup>();
  const byEmail = new Map<string, ContactGroup>();
  const byRowKey = new Map<string, ContactGroup>();
  const compatible = (g: ContactGroup | undefined, pk: string | undefined) => g && (!g.pronetKey || !pk || g.pronetKey === pk);
  inputs.forEach((inp, i) => {
    const pk = inp.pronetKey;
    let g = pk ? byPronet.get(pk) : undefined;
    if (!g) for (const e of inp.emails ?? []) if (compatible(byEmail.get(e), pk)) { g = byEmail.get(e); break; }
    if (!g && compatible(byRowKey.get(inp.rowKey), pk)) g = byRowKey.get(inp.rowKey);
    if (!g) {
      g = { first: i, members: [], rowKeys: [], origin: null, emails: [] };
      groups.push(g);
    }
    g.members.push(i);
    absorb(g, inp as Partial<ContactGroup>);
    const prev = byRowKey.get(inp.rowKey);
    if (prev && prev !== g) prev.rowKeys.splice(prev.rowKeys.indexOf(inp.rowKey), 1);
    if (prev !== g) g.rowKeys.push(inp.rowKey);
    byRowKey.set(inp.rowKey, g);
    if (g.pronetKey) byPronet.set(g.pronetKey, g);
    for (const e of g.emails) if (!byEmail.has(e)) byEmail.set(e, g);
  });
  return groups;
}
