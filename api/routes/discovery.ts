/**
 * Discovery search over the global dataset (API-SPEC "Discovery search", DESIGN §4):
 * v2 searches (grouped conditions, keyset pages, totals exact up to a limit), verified searches (flat input
 * mapping, ranked numbered pages) and the verified-company import job.
 *
 * Credits: exactly the price × rows returned in `data`, debited atomically after the page is read
 * and before it is answered. Payment is decided before the search: a balance that cannot cover a
 * full page (price × `limit`, capped by the pull number) is a 402 whatever the query would match,
 * and charges nothing.
 * Session keys are not billed. `limit` / the pull number caps what a request can cost.
 */
import { defineRoute, reply } from '../route.js';
import { JobAccepted } from '../schemas/common.js';
import {
  CompanyPage,
  CompanyV2Page,
  ContactPage,
  ContactV2Page,
  ImportVerifiedCompaniesBody,
  V2CompanySearchBody,
  V2ContactSearchBody,
  VerifiedCompanyBody,
  VerifiedContactBody,
  type VerifiedBody,
} from '../schemas/discovery.js';
import { type DiscoveryEntity } from '../../domain/discoveryCatalog.js';
import { VERIFIED_MAX_LIMIT, VERIFIED_RANKING_DOC } from '../../domain/verifiedSearchInput.js';
import { VERIFIED_IMPORT_PERSON_PRICE, type DiscoveryOperation } from '../../domain/pricing.js';
import { SESSION_PREVIEW_ROWS } from '../../domain/sessionPreview.js';
import { importVerifiedCompanies, searchV2Page, searchVerifiedPage } from '../usecases/discoverySearch.js';

const SESSION_NOTE = `Session keys (unbilled in-app previews) get the first ${SESSION_PREVIEW_ROWS} rows only, no page tokens, and emails and phone numbers masked (\`j***@acme.com\`).`;

const V2_DESCRIPTION = (entity: DiscoveryEntity) =>
  [
    `Searches the ${entity === 'contact' ? 'people' : 'companies'} of the discovery dataset. \`conditions\` (root, AND-ed) and/or \`groupedCondition\``,
    '(AND / OR / NOT, nestable) use paths from',
    `GET /schema/discovery-search-v2/${entity}; operators per type as listed there. Results are ordered by record id and paged by keyset`,
    '(`meta.nextToken` / `previousToken`, bound to the query: a token used with other conditions or fields is a 400); `meta.totalRecords` is exact up to',
    'the exact-count limit (10,000 by default) and an estimate above it, flagged by `meta.totalRecordsEstimated: true`.',
    entity === 'company'
      ? 'Items are company records. dsContact.* conditions keep companies having at least one matching person (the person conditions of one group ' +
        'are met by the same person); person attributes are filters only: a dsContact.* path in `fields` is a 400 (people come from find-contacts-v2, charged per person).'
      : 'Items follow the Contact shape: `dsContact.member_job_title` → `title`, `dsCompany.company_name` → `company.companyName` (with `company.id`); ' +
        '`emails` are strings, their statuses in `emailStatuses`.',
    'Profile URLs (`pronet`, `companyPronet`) are answered as `https://…` URLs; `==` / `IN` on them accept any form of the URL.',
    'Charged 1 credit per row returned in `data`; 402 `insufficient_credits` (nothing charged, decided before searching) when the balance cannot cover a full page (1 credit × `limit`).',
    SESSION_NOTE,
  ].join(' ');

const verifiedDescription = (entity: DiscoveryEntity) =>
  [
    `Ranked search over verified ${entity === 'company' ? 'companies' : 'people'}. ${VERIFIED_RANKING_DOC[entity]}`,
    `Filters are a flat \`inputFieldMapping\` (names from GET /schema/verified-discovery/${entity}); \`page\` ≤ 1000, \`limit\` ≤ ${VERIFIED_MAX_LIMIT};`,
    `company name and website lists ≤ 500 entries each and 500 combined (else 400). \`${entity === 'company' ? 'numberOfCompaniesToPull' : 'numberOfContactsToPull'}\``,
    'caps the ranked rows over all pages (and `meta.totalRecords`). No cursor: `previousToken` and `nextToken` are empty.',
    'Charged 4 credits per row returned in `data`; 402 (nothing charged, decided before searching) when the balance cannot cover a full page (4 credits × `limit`, capped by the pull number).',
    SESSION_NOTE,
  ].join(' ');

function verifiedRoute(entity: DiscoveryEntity) {
  const op: DiscoveryOperation = entity === 'company' ? 'find-verified-companies' : 'find-verified-contacts';
  return defineRoute({
    method: 'post', path: `/discovery-search/${op}`, tag: 'Discovery search',
    summary: `Find verified ${entity === 'company' ? 'companies' : 'contacts'} (ranked, numbered pages)`,
    description: verifiedDescription(entity),
    body: entity === 'company' ? VerifiedCompanyBody : VerifiedContactBody,
    responses: { 200: entity === 'company' ? CompanyPage : ContactPage }, errors: [400, 401, 402, 429, 500, 503], errorCodes: ['search_unavailable'],
    orm: false,
    handler: async ({ body, auth, deps, scope }) => searchVerifiedPage(scope, deps, auth, entity, body as VerifiedBody),
  });
}

export const discoveryRoutes = [
  defineRoute({
    method: 'post', path: '/discovery-search/find-contacts-v2', tag: 'Discovery search',
    summary: 'Find contacts with grouped conditions (v2)', description: V2_DESCRIPTION('contact'),
    body: V2ContactSearchBody, responses: { 200: ContactV2Page }, errors: [400, 401, 402, 429, 500, 503], errorCodes: ['search_unavailable'],
    // the search and the debit go through the pool: no entity manager fork per request
    orm: false,
    handler: async ({ body, auth, deps, scope }) => searchV2Page(scope, deps, auth, 'contact', body),
  }),
  defineRoute({
    method: 'post', path: '/discovery-search/find-companies-v2', tag: 'Discovery search',
    summary: 'Find companies with grouped conditions (v2)', description: V2_DESCRIPTION('company'),
    body: V2CompanySearchBody, responses: { 200: CompanyV2Page }, errors: [400, 401, 402, 429, 500, 503], errorCodes: ['search_unavailable'],
    orm: false,
    handler: async ({ body, auth, deps, scope }) => searchV2Page(scope, deps, auth, 'company', body),
  }),
  verifiedRoute('company'),
  verifiedRoute('contact'),
  defineRoute({
    method: 'post', path: '/discovery-search/import-verified-companies', tag: 'Discovery search',
    summary: 'Save chosen verified companies into the workspace (job)',
    description: [
      'Starts a job that upserts the given verified companies (ids from find-verified-companies) as workspace companies (matched by',
      'website domain, else name; re-import updates). With `segmentId`, the companies\' verified people (up to `contactsPerCompany` each, ranked',
      'as in find-verified-contacts) are also ingested as contacts through the workspace\'s importFromWebhook source `verified-discovery`,',
      'attached to that segment. Ids that are unknown or not verified are reported in the job result.',
      `Credits: the companies are free (find-verified-companies charged for them); each verified person imported as a contact costs ${VERIFIED_IMPORT_PERSON_PRICE}`,
      '(the find-verified-contacts price), debited once per (job, person). With `segmentId`, a balance that cannot cover one person is a 402',
      '`insufficient_credits` up front; when the balance runs out during the job, it stops: `jobStatus` `failed`, `error.code`',
      '`insufficient_credits`, and `jobResponsePayload` holds what was imported and paid for. Session keys start no job (403 `session_key_not_allowed`).',
      'Result: `{companies: {requested, imported, created, updated, notFound[]}, contacts: {imported, created, updated}, segmentId, sourceId, creditsCharged}`.',
    ].join(' '),
    body: ImportVerifiedCompaniesBody, responses: { 202: JobAccepted }, errors: [400, 401, 404, 409, 422, 429, 500], errorCodes: ['url_not_allowed'],
    idempotent: true,
    handler: async ({ body, auth, deps, scope }) => reply(202, await importVerifiedCompanies(scope, deps, auth, body)),
  }),
];
