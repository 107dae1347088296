/**
 * The `dataset` listening provider: answers audience queries from the discovery dataset through
 * db/listeningAudience.ts (which documents who the audience of each source type is) and maps
 * the rows to listening people; pages are keyset-ordered by profile URL.
 */
import { datasetAudienceRows, datasetSubjectName } from '../../db/listeningAudience.js';
import type { Pool } from '../../db/pool.js';
import { isListeningSourceType } from '../../domain/sourceRules.js';
import { ListeningProviderError, type ListeningPage, type ListeningProvider, type ListeningQuery } from './listening.js';

const asUrl = (u: string | null) => (u ? (/^[a-z]+:\/\//i.test(u) ? u : `https://${u}`) : null);

/** The source's display name; a failed look-up leaves the name unknown rather than failing the pull. */
async function subjectOf(pool: Pool, q: ListeningQuery): Promise<ListeningPage['subject']> {
  const name = await datasetSubjectName(pool, q.sourceIdentifier).catch(() => null);
  return name ? { name } : null;
}

export function createDatasetListeningProvider(pool: Pool): ListeningProvider {
  return {
    name: 'dataset',
    async fetchAudience(query, page): Promise<ListeningPage> {
      if (!isListeningSourceType(query.sourceType)) {
        throw new ListeningProviderError('invalid_input', `source type ${String(query.sourceType)} has no listening audience`);
      }
      const after = page.cursor ? Buffer.from(page.cursor, 'base64url').toString('utf8') : '';
      let rows;
      try {
        rows = await datasetAudienceRows(pool, query, { after, limit: page.limit + 1 });
      } catch (e) {
        throw new ListeningProviderError('transient', `dataset listening query failed: ${(e as Error).message}`);
      }
      const more = rows.length > page.limit;
      const pageRows = more ? rows.slice(0, page.limit) : rows;
      return {
        people: pageRows.map((r) => ({
          pronet: asUrl(r.member_url)!,
          firstName: r.member_first_name,
          lastName: r.member_last_name,
          fullName: r.member_full_name,
          jobTitle: r.member_job_title,
          headline: r.member_headline,
          location: [r.member_location_city, r.member_location_country].filter(Boolean).join(', ') || null,
          emails: [],
          company:
            r.company_name || r.company_pronet_url
              ? {
                  companyName: r.company_name,
                  companyPronet: asUrl(r.company_pronet_url),
                  companyWebsite: r.company_website,
                  companyIndustry: r.industry,
                  companyHeadcount: r.size_range,
                }
              : null,
          interaction: { type: r.interaction_type ?? 'post', postUrl: asUrl(r.post_url), occurredAt: r.posted_at.toISOString() },
        })),
        nextCursor: more ? Buffer.from(pageRows.at(-1)!.member_url, 'utf8').toString('base64url') : null,
        ...(page.cursor ? {} : { subject: await subjectOf(pool, query) }),
      };
    },
  };
}
