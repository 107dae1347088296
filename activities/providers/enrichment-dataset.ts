/**
 * The built-in `dataset` enrichment provider: answers from the discovery dataset tables
 * (`ds_people`, `ds_companies`, `ds_posts`), by normalised profile URL, or for emails by person
 * name + company domain or by a name alone that names exactly one person. Every lookup is one
 * indexed query.
 */
import type { Queryable } from '../../db/pool.js';
import { escapeLike } from '../../domain/like.js';
import type { EnrichedCompany, EnrichedContact, EnrichmentLookup, EnrichmentSlice, SliceDataOf } from '../../domain/enrichment.js';
import type { EnrichmentProvider, ProviderCallOptions } from './enrichment-provider.js';

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

interface PersonRow {
  member_pronet_url: string;
  member_full_name: string | null;
  member_first_name: string | null;
  member_last_name: string | null;
  member_job_title: string | null;
  member_seniority: string | null;
  member_headline: string | null;
  member_location_city: string | null;
  member_location_country: string | null;
  member_skills: string[];
  member_years_experience: number | null;
}

interface CompanyRow {
  company_pronet_url: string;
  company_name: string | null;
  company_website: string | null;
  industry: string | null;
  size_range: string | null;
  employee_count: number | null;
  founded_year: number | null;
  hq_city: string | null;
  hq_state: string | null;
  hq_country: string | null;
  technologies: string[];
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
        const r = await this.db.query<PersonRow>(
          `select member_pronet_url, member_full_name, member_first_name, member_last_name, member_job_title, member_seniority,
                  member_headline, member_location_city, member_location_country, member_skills, member_years_experience
             from ds_people where member_pronet_url = $1`,
          [key],
        );
        const p = r.rows[0];
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
        const r = await this.db.query<CompanyRow>(
          `select c.company_pronet_url, c.company_name, c.company_website, c.industry, c.size_range, c.employee_count,
                  c.founded_year, c.hq_city, c.hq_state, c.hq_country, c.technologies
             from ds_people p
             join ds_companies c on c.id = p.company_id or (p.company_id is null and c.company_pronet_url = p.company_pronet_url)
            where p.member_pronet_url = $1
            limit 1`,
          [key],
        );
        const c = r.rows[0];
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
          const r = await this.db.query<{ member_emails: unknown }>(`select member_emails from ds_people where member_pronet_url = $1`, [key]);
          const emails = asEmails(r.rows[0]?.member_emails);
          if (emails.length) return { emails };
        }
        if (lookup.companyDomain && lookup.fullName) {
          const r = await this.db.query<{ member_emails: unknown }>(
            `select p.member_emails
               from ds_companies c
               join ds_people p on p.company_id = c.id
              where c.company_domain = $1
                and (lower(p.member_full_name) = lower($2)
                     or (lower(p.member_first_name) = lower($3) and lower(p.member_last_name) = lower($4)))
              order by p.verified desc, p.id
              limit 1`,
            [lookup.companyDomain, lookup.fullName, lookup.firstName ?? '', lookup.lastName ?? ''],
          );
          const emails = asEmails(r.rows[0]?.member_emails);
          if (emails.length) return { emails };
        }
        if (!lookup.companyDomain && lookup.fullName) {
          // By name alone: only a name that names exactly one person is an answer.
          const r = await this.db.query<{ member_emails: unknown }>(
            `select member_emails from ds_people where member_full_name ilike $1 limit 2`,
            [escapeLike(lookup.fullName)],
          );
          const emails = r.rows.length === 1 ? asEmails(r.rows[0]!.member_emails) : [];
          if (emails.length) return { emails };
        }
        return null;
      }
      case 'phoneNumbers': {
        if (!key) return null;
        const r = await this.db.query<{ member_phones: unknown }>(`select member_phones from ds_people where member_pronet_url = $1`, [key]);
        const phoneNumbers = asPhones(r.rows[0]?.member_phones);
        return phoneNumbers.length ? { phoneNumbers } : null;
      }
      case 'pronetPosts': {
        if (!key) return null;
        const r = await this.db.query<{ post_url: string; text: string | null; posted_at: Date | null; likes: number | null; comments: number | null }>(
          `select post_url, text, posted_at, likes, comments
             from ds_posts
            where member_pronet_url = $1 and interaction_type is null
            order by posted_at desc nulls last
            limit $2`,
          [key, opts.postsLimit],
        );
        if (!r.rows.length) return null;
        return {
          pronetPosts: r.rows.map((p) => ({
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
