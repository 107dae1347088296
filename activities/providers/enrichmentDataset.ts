/**
 * The built-in `dataset` enrichment provider: answers from the discovery dataset tables
 * (`ds_people`, `ds_companies`, `ds_posts`), by normalised profile URL, or for emails by person
 * name + company domain or by a name alone that names exactly one person. Every lookup is one
 * indexed query.
 */
import type { Queryable } from '../../db/pool.js';
import { datasetCompanyOfPerson, datasetEmailsAtCompany, datasetEmailsByName, datasetEmailsByProfile, datasetPerson, datasetPhones, datasetPosts } from '../../db/enrichmentDataset.js';
import type { EnrichedCompany, EnrichedContact, EnrichmentLookup, EnrichmentSlice, SliceDataOf } from '../../domain/enrichment.js';
import type { EnrichmentProvider, ProviderCallOptions } from './enrichmentProvider.js';

const profileUrl = (key: string | null) => (key ? `https://${key}` : undefined);

/** Drops null/undefined/empty values so the payload carries only what is known. */
function compact<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === null || v === undefined || v === '') continue;
    if (Array.isArray(v) && v.length === 0) continue;
    out[k] = v;
  }
  return out as T;
}

type Email = { email: string; status: string };
type Phone = { number: string; type: string };

const asEmails = (v: unknown): Email[] =>
  (Array.isArray(v) ? v : [])
    .filter((e): e is { email: string; status?: unknown } => !!e && typeof e === 'object' && typeof (e as { email?: unknown }).email === 'string')
    .map((e) => ({ email: e.email, status: typeof e.status === 'string' ? e.status : 'unknown' }));

const asPhones = (v: unknown): Phone[] =>
  (Array.isArray(v) ? v : [])
    .filter((e): e is { number: string; type?: unknown } => !!e && typeof e === 'object' && typeof (e as { number?: unknown }).number === 'string')
    .map((e) => ({ number: e.number, type: typeof e.type === 'string' ? e.type : 'unknown' }));

export class DatasetEnrichmentProvider implements EnrichmentProvider {
  constructor(
    readonly name: string,
    private readonly db: Queryable,
  ) {}

  async find<S extends EnrichmentSlice>(slice: S, lookup: EnrichmentLookup, opts: ProviderCallOptions): Promise<SliceDataOf<S> | null> {
    const found = await this.lookup(slice, lookup, opts);
    return found as SliceDataOf<S> | null;
  }

  private async lookup(slice: EnrichmentSlice, lookup: EnrichmentLookup, opts: ProviderCallOptions): Promise<SliceDataOf<EnrichmentSlice> | null> {
    const key = lookup.pronetKey;
    switch (slice) {
      case 'basic_contact_data': {
        if (!key) return null;
        const p = await datasetPerson(this.db, key);
        if (!p) return null;
        const contact: EnrichedContact = compact({
          fullName: p.member_full_name ?? undefined,
          firstName: p.member_first_name ?? undefined,
          lastName: p.member_last_name ?? undefined,
          title: p.member_job_title ?? undefined,
          headline: p.member_headline ?? undefined,
          seniority: p.member_seniority ?? undefined,
          pronet: profileUrl(p.member_pronet_url),
          locationCity: p.member_location_city ?? undefined,
          locationCountry: p.member_location_country ?? undefined,
          skills: p.member_skills,
          yearsExperience: p.member_years_experience ?? undefined,
        });
        return { contact };
      }
      case 'basic_company_data': {
        if (!key) return null;
        const c = await datasetCompanyOfPerson(this.db, key);
        if (!c) return null;
        const company: EnrichedCompany = compact({
          companyName: c.company_name ?? undefined,
          companyWebsite: c.company_website ?? undefined,
          companyPronet: profileUrl(c.company_pronet_url),
          companyIndustry: c.industry ?? undefined,
          companyHeadcount: c.size_range ?? undefined,
          companyCity: c.hq_city ?? undefined,
          companyState: c.hq_state ?? undefined,
          companyCountry: c.hq_country ?? undefined,
          employeeCount: c.employee_count ?? undefined,
          foundedYear: c.founded_year ?? undefined,
          technologies: c.technologies,
        });
        return { company };
      }
      case 'emails': {
        if (key) {
          const emails = asEmails(await datasetEmailsByProfile(this.db, key));
          if (emails.length) return { emails };
        }
        if (lookup.companyDomain && lookup.fullName) {
          const emails = asEmails(await datasetEmailsAtCompany(this.db, lookup.companyDomain, { fullName: lookup.fullName, firstName: lookup.firstName, lastName: lookup.lastName }));
          if (emails.length) return { emails };
        }
        if (!lookup.companyDomain && lookup.fullName) {
          // By name alone: only a name that names exactly one person is an answer.
          const found = await datasetEmailsByName(this.db, lookup.fullName);
          const emails = found.length === 1 ? asEmails(found[0]) : [];
          if (emails.length) return { emails };
        }
        return null;
      }
      case 'phoneNumbers': {
        if (!key) return null;
        const phoneNumbers = asPhones(await datasetPhones(this.db, key));
        return phoneNumbers.length ? { phoneNumbers } : null;
      }
      case 'pronetPosts': {
        if (!key) return null;
        const posts = await datasetPosts(this.db, key, opts.postsLimit);
        if (!posts.length) return null;
        return {
          pronetPosts: posts.map((p) => ({
            postUrl: p.post_url.includes('://') ? p.post_url : `https://${p.post_url}`,
            text: p.text,
            postedAt: p.posted_at ? p.posted_at.toISOString() : null,
            likes: p.likes ?? 0,
            comments: p.comments ?? 0,
          })),
        };
      }
    }
  }
}
