/**
 * Body rules the handlers apply, now carried by the published schemas (issue 27 item 21:
 * schemathesis positive_data_acceptance found each of these answered 400 to a schema-valid body).
 */
import { describe, expect, it } from 'vitest';
import type { TSchema } from '@sinclair/typebox';
import { validate } from '../../api/validation.js';
import { BulkUpsertBody } from '../../api/schemas/contacts.js';
import { ErasureRequestBody } from '../../api/schemas/privacy.js';
import { AccessRequestBody } from '../../api/schemas/subjectAccess.js';
import { ExternalReplyBody } from '../../api/schemas/publishing.js';
import { parsePronetPostUrl } from '../../domain/pronetUrls.js';
import { VerifiedContactBody } from '../../api/schemas/discovery.js';
import { BulkUpsertSourcesBody, CreateSourceBody, PatchSourceBody } from '../../api/schemas/sources.js';
import { validateRunFrequency } from '../../domain/runFrequency.js';
import { validateSourceInput } from '../../domain/sourceRules.js';

/** The server's own validation (ajv, as requests get it): true when the body passes. */
const valid = (schema: TSchema, body: unknown) => {
  try {
    validate(schema, body, 'body');
    return true;
  } catch {
    return false;
  }
};

describe('selection rules in the schemas', () => {
  it('bulk upsert: at least one row, or a file', () => {
    expect(valid(BulkUpsertBody, { contactsData: [] })).toBe(false);
    expect(valid(BulkUpsertBody, { contactsData: [{ 'contact.firstName': 'Ada' }] })).toBe(true);
    expect(valid(BulkUpsertBody, { contactsData: [], contactsFile: { fileName: 'f.csv' } })).toBe(true);
    // Rows and a file together: the handler refuses it, so the schema does.
    expect(valid(BulkUpsertBody, { contactsData: [{ 'contact.firstName': 'Ada' }], contactsFile: { fileName: 'f.csv' } })).toBe(false);
  });
  it('scheduled times and external post URLs have the shapes the handlers take', () => {
    const row = (scheduledTime: string) => ({ externalPostUrl: 'urn:li:activity:7', content: 'Hi', scheduledTime, providerId: 'x' });
    expect(valid(ExternalReplyBody, row('2030-01-02T03:04:05Z'))).toBe(true);
    expect(valid(ExternalReplyBody, row('string'))).toBe(false);
    expect(valid(ExternalReplyBody, row('2030-01-02T03:04:05'))).toBe(false); // no zone
    const url = (externalPostUrl: string) => ({ externalPostUrl, content: 'Hi', scheduledTime: '2030-01-02T03:04:05Z', providerId: 'x' });
    for (const u of ['string', 'https://example.com/posts/a-activity-1', 'urn:li:person:1']) expect(valid(ExternalReplyBody, url(u)), u).toBe(false);
    for (const u of [
      'urn:li:ugcPost:123',
      'https://www.linkedin.com/feed/update/urn:li:activity:123/',
      'https://www.linkedin.com/feed/update/urn%3Ali%3Ashare%3A9',
      'https://linkedin.com/posts/ada_slug-activity-42-AbCd?utm_source=x',
    ]) {
      expect(valid(ExternalReplyBody, url(u)), u).toBe(true);
      expect(parsePronetPostUrl(u), u).not.toBeNull();
    }
  });
  it('free-form values carry no NUL in nested keys or strings (the server refuses them everywhere)', async () => {
    const { PatchContactBody, UpsertContactBody } = await import('../../api/schemas/contacts.js');
    const { CreateSegmentBody } = await import('../../api/schemas/segments.js');
    const nested = (v: unknown) => ({ a: [{ b: v }] });
    for (const [schema, wrap] of [
      [BulkUpsertBody, (v: unknown) => ({ contactsData: [{ 'contact.firstName': v }] })],
      [UpsertContactBody, (v: unknown) => ({ 'contact.customFields.x': v })],
      [PatchContactBody, (v: unknown) => ({ customFields: { '01a1ff4e-c0b3-77cc-8dc5-1ae04d0a0b3a': v } })],
      [CreateSegmentBody, (v: unknown) => ({ name: 'S', savedViewTemplates: [{ view: v }] })],
    ] as const) {
      expect(valid(schema, wrap(nested('ok'))), schema.$id).toBe(true);
      expect(valid(schema, wrap({ 'k\u0000ey': 1 }))).toBe(false);
      expect(valid(schema, wrap(nested({ 'k\u0000': null })))).toBe(false);
      expect(valid(schema, wrap(nested('a\u0000b')))).toBe(false);
    }
  });
  it('a contact PATCH says the shapes of pronet, company website and headcount, and of custom field ids', async () => {
    // the handler refused these with a 400 while the schema took any string
    const { PatchContactBody } = await import('../../api/schemas/contacts.js');
    for (const body of [{ pronet: 'Jane' }, { pronet: ' ' }, { company: { companyWebsite: 'acme' } }, { company: { companyHeadcount: 'about 50' } }, { company: { companyHeadcount: ' ' } }, { customFields: { score: 1 } }])
      expect(valid(PatchContactBody, body), JSON.stringify(body)).toBe(false);
    for (const body of [
      { pronet: 'https://www.linkedin.com/in/jane-doe/' },
      { pronet: '' },
      { pronet: null },
      { company: { companyWebsite: 'https://acme.com/about', companyHeadcount: '51-200' } },
      { company: { companyWebsite: '', companyHeadcount: '' } },
      { customFields: { '01a1ff4e-c0b3-77cc-8dc5-1ae04d0a0b3a': 1 } },
    ])
      expect(valid(PatchContactBody, body), JSON.stringify(body)).toBe(true);
  });
  it('erasure and access requests name the person', () => {
    for (const schema of [ErasureRequestBody, AccessRequestBody]) {
      expect(valid(schema, {})).toBe(false);
      expect(valid(schema, { emails: [] })).toBe(false);
      expect(valid(schema, { profileUrls: ['https://pronet.example/in/ada'] })).toBe(true);
    }
  });
});

describe('conditions over a fixed catalog say what the server takes (issue 27 item 21)', async () => {
  const { FilterContactsBody, UniqueValuesBody } = await import('../../api/schemas/contacts.js');
  const { V2ContactSearchBody, V2CompanySearchBody, VerifiedCompanyBody } = await import('../../api/schemas/discovery.js');
  const { FilterPostsBody } = await import('../../api/schemas/posts.js');
  const { FilterSourcesBody } = await import('../../api/schemas/sources.js');
  const { UnifiedDataBody } = await import('../../api/schemas/enrichment.js');
  const { parseWhere } = await import('../../domain/conditions.js');
  const { contactSearchCatalog } = await import('../../domain/discoveryCatalog.js');
  const { contactCatalog } = await import('../../domain/contactCatalog.js');
  const { postCatalog } = await import('../../domain/postCatalog.js');

  it('a path outside the catalog, or an operator or value its type does not take, is schema-invalid', () => {
    // each of these passed the old generic Condition and got a 400 from the handler
    expect(valid(FilterContactsBody, { conditions: [{ field: 'string', operator: '==', value: 'x' }] })).toBe(false);
    expect(valid(FilterContactsBody, { conditions: [{ field: 'contact.firstName', operator: '>', value: 'x' }] })).toBe(false);
    expect(valid(FilterContactsBody, { conditions: [{ field: 'contact.createdAt', operator: '==', value: 'yesterday' }] })).toBe(false);
    expect(valid(FilterContactsBody, { sort: [{ field: 'contact.emails' }] })).toBe(false);
    expect(valid(FilterContactsBody, { fields: ['0'] })).toBe(false);
    expect(valid(UniqueValuesBody, { groupByField: 'string' })).toBe(false);
    expect(valid(V2ContactSearchBody, { conditions: [{ field: 'dsContact.member_skills', operator: '==', value: 'Go' }] })).toBe(false);
    expect(valid(V2ContactSearchBody, { groupedCondition: { operator: 'AND', conditions: [{ field: 'dsCompany.employee_count', operator: 'BETWEEN', value: [1] }] } })).toBe(false);
    expect(valid(V2CompanySearchBody, { conditions: [{ field: 'dsCompany.company_name', operator: 'LIKE', value: 'acme\\' }] })).toBe(false);
    expect(valid(FilterPostsBody, { conditions: [{ field: 'providerId', operator: '==', value: 'not-a-uuid' }] })).toBe(false);
    expect(valid(FilterSourcesBody, { conditions: [{ field: 'string', operator: '==', value: 'x' }] })).toBe(false);
  });

  it('what the schema takes, the condition parser takes', () => {
    const conditions = [
      { field: 'dsContact.member_skills', operator: 'IN', value: ['Go'] },
      { field: 'dsCompany.employee_count', operator: 'BETWEEN', value: [1, '200'] },
      { field: 'dsContact.updated_at', operator: '>=', value: '2026-01-28T10:00:00+01:00' },
      { field: 'dsContact.verified', operator: '==', value: 'true' },
      { field: 'dsCompany.company_name', operator: 'NOT LIKE', value: 'acme\\\\' },
      { field: 'dsContact.member_full_name', operator: 'IS EMPTY' },
    ];
    const body = { conditions, groupedCondition: { operator: 'NOT', conditions: [{ operator: 'OR', conditions: conditions.slice(0, 2) }] } };
    expect(valid(V2ContactSearchBody, body)).toBe(true);
    expect(() => parseWhere(contactSearchCatalog, body)).not.toThrow();
    const contact = { conditions: [{ field: 'contact.createdAt', operator: 'BETWEEN', value: ['2026-01-01', '2026-02-01'] }, { field: 'contact.emails', operator: 'ALL', value: 'a@b.c' }] };
    expect(valid(FilterContactsBody, contact)).toBe(true);
    expect(() => parseWhere(contactCatalog([]), contact)).not.toThrow();
    const posts = { conditions: [{ field: 'providerId', operator: 'IN', value: ['0193a5c2-7f1e-7b3a-9c4d-2e8f6a1b3c5d'] }, { field: 'externalPost', operator: '!=', value: false }] };
    expect(valid(FilterPostsBody, posts)).toBe(true);
    expect(() => parseWhere(postCatalog, posts)).not.toThrow();
  });

  it('a date value is any real calendar day the server reads, 0001 to 9999, and never one it refuses', async () => {
    // The date pattern once took days 01–28 and years 1000–9899 only: 2026-01-31, a leap day and
    // 0001-01-01 were refused by the schema though the server reads them (hardeningInput.test.ts).
    const { ISO_DATE_PATTERN } = await import('../../api/schemas/conditions.js');
    const { parseIsoDate } = await import('../../domain/dates.js');
    const pattern = new RegExp(ISO_DATE_PATTERN, 'u');
    const pad = (n: number, w = 2) => String(n).padStart(w, '0');
    const suffixes = ['', 'T00:00Z', 'T23:59:59.999999Z', 'T12:30', 'T00:00+13:59', 'T23:59-13:59', 'T24:00Z'];
    let taken = 0;
    for (const year of [0, 1, 2, 4, 100, 400, 1900, 2000, 2024, 2025, 2100, 9896, 9998, 9999])
      for (let month = 0; month <= 13; month++)
        for (let day = 0; day <= 32; day++)
          for (const suffix of suffixes) {
            const value = `${pad(year, 4)}-${pad(month)}-${pad(day)}${suffix}`;
            const read = parseIsoDate(value) !== null;
            if (pattern.test(value)) {
              taken++;
              expect(read, value).toBe(true);
            } else if (read && (suffix === '' || suffix.endsWith('Z'))) {
              // a day (or UTC time) the server reads is a day the schema takes; only offsets and
              // local times in the edge years 0001 and 9999 are left out (they may leave the range)
              throw new Error(`${value}: read by the server, refused by the schema`);
            }
          }
    expect(taken).toBeGreaterThan(20_000);
  });

  it('a custom field path is well-formed; one the workspace does not have is a 404, not a 400', () => {
    const path = 'contact.customFields.0193a5c2-7f1e-7b3a-9c4d-2e8f6a1b3c5d';
    expect(valid(FilterContactsBody, { conditions: [{ field: path, operator: '==', value: 1 }], sort: [{ field: path }] })).toBe(true);
    expect(() => parseWhere(contactCatalog([]), { conditions: [{ field: path, operator: '==', value: 1 }] })).toThrow(expect.objectContaining({ code: 'not_found' }));
  });

  it('verified inputs: userInput per input', () => {
    const one = (sourceFieldName: string, userInput: unknown) => valid(VerifiedCompanyBody, { inputFieldMapping: [{ sourceFieldName, userInput }] });
    expect(one('numberOfCompaniesToPull', 0)).toBe(false);
    expect(one('numberOfCompaniesToPull', 25)).toBe(true);
    expect(one('companyHeadcountRange', ['a-b'])).toBe(false);
    expect(one('companyHeadcountRange', ['51-200', '1000+'])).toBe(true);
    expect(one('companyIndustryInclude', [' '])).toBe(false);
    expect(one('companyWebsiteInclude', ['acme'])).toBe(false);
    expect(one('companyRevenue', { min: '5M', max: 1e9 })).toBe(true);
  });

  it('unified-data-api: pronet for profile slices, names in pairs', async () => {
    // names in pairs: dependentRequired, which draft-07 ajv ignored until validation.ts added it
    expect(valid(UnifiedDataBody, { fields: ['emails'], firstName: 'Ada' })).toBe(false);
    expect(valid(UnifiedDataBody, { fields: ['emails'], pronet: 'https://pronet.example/in/ada', lastName: 'Lovelace' })).toBe(false);
    expect(valid(UnifiedDataBody, { fields: ['emails'], firstName: 'Ada', lastName: 'Lovelace' })).toBe(true);
    expect(valid(UnifiedDataBody, { fields: ['phoneNumbers'], pronet: 'string' })).toBe(false);
    expect(valid(UnifiedDataBody, { fields: ['phoneNumbers'], pronet: 'https://pronet.example/in/ada' })).toBe(true);
    // pronet for profile slices: the published schema says it (a JSON Schema validator refuses the
    // body), and the server answers it with its documented code, not validation_failed
    const { Ajv2019 } = await import('ajv/dist/2019.js');
    const published = new Ajv2019({ strict: false }).compile(JSON.parse(JSON.stringify(UnifiedDataBody)));
    const noLookup = { fields: ['emails', 'phoneNumbers'], fullName: 'Ada Lovelace' };
    expect(published(noLookup)).toBe(false);
    const { planEnrichment } = await import('../../domain/enrichmentPlan.js');
    expect(valid(UnifiedDataBody, noLookup)).toBe(true);
    expect(() => planEnrichment(noLookup as never, { waterfall: {} } as never)).toThrow(expect.objectContaining({ code: 'pronet_required' }));
  });
  it('sources: one branch per type, each what the per-type rules accept', () => {
    // Found by positive_data_acceptance (seed 12345): a job search with an identifier, a
    // pronetInbound source identified by "string", both answered 400 by the per-type rules.
    const refused = [
      { sourceType: 'pronetJobPosting', sourceIdentifier: 'crm-export', sourceMeta: { jobTitle: 'a', jobLocation: 'b', postedTime: 'c', jobType: 'd' } },
      { sourceType: 'pronetInbound', sourceIdentifier: 'string' },
      { sourceType: 'pronetPost', sourceIdentifier: 'https://www.pronet.example/in/ada' },
      { sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: ' ab ' } },
      { sourceType: 'pronetJobPosting', sourceMeta: { jobTitle: 'a', jobLocation: 'b', postedTime: 'c' } },
      { sourceType: 'importFromWebhook', sourceMeta: { config: { fieldMapping: [{ sourceFieldName: 'a', targetFieldName: 'contact.createdAt' }] } } },
    ];
    for (const body of refused) {
      expect(valid(CreateSourceBody, body), JSON.stringify(body)).toBe(false);
      expect(valid(BulkUpsertSourcesBody, { sources: [body] }), JSON.stringify(body)).toBe(false);
    }
    const accepted = [
      { sourceType: 'pronetInbound', sourceIdentifier: 'https://www.pronet-x.example/in/ada-lovelace/?x=1' },
      { sourceType: 'pronetOutbound', sourceIdentifier: 'pronet.example/company/acme' },
      { sourceType: 'pronetPost', sourceIdentifier: 'https://www.pronet.example/feed/update/urn:li:activity:123/' },
      { sourceType: 'pronetPost', sourceIdentifier: 'https://www.pronet.example/posts/ada_x-activity-1' },
      { sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: 'a b' } },
      { sourceType: 'pronetJobPosting', sourceMeta: { jobTitle: 'a', jobLocation: 'b', postedTime: 'c', jobType: 'd' } },
      { sourceType: 'importFromWebhook', sourceIdentifier: 'crm-export', sourceMeta: { config: { fieldMapping: [{ sourceFieldName: 'a', targetFieldName: 'contact.firstName' }] } } },
    ];
    for (const body of accepted) {
      expect(valid(CreateSourceBody, body), JSON.stringify(body)).toBe(true);
      expect(() => validateSourceInput(body as CreateSourceBody, () => true)).not.toThrow();
    }
  });
  it('runFrequency: the day counts and intervals validateRunFrequency takes', () => {
    // Found by positive_data_acceptance (seed 12345): `periodicInterval: "0"` passed the schema.
    const rf = (numberOfPastDaysToSync: string, periodicInterval: string) => ({ runFrequency: { numberOfPastDaysToSync, periodicInterval } });
    for (const [days, interval] of [['0', '1d'], ['91', '1d'], ['7', '0'], ['7', '14m'], ['7', 'PT14M'], ['7', '91d'], ['7', 'P13W'], ['7', 'string'], ['7', 'P']]) {
      expect(valid(PatchSourceBody, rf(days!, interval!)), `${days} ${interval}`).toBe(false);
    }
    const days = ['1', '7', ' 90 ', '007', '090'];
    const intervals = ['15m', '9999M', '1h', '999h', '1d', '90d', '1w', '12W', 'P1D', 'p90d', 'PT6H', 'PT30M', 'P1DT12H', 'P89DT23H', 'PT999H59M', 'P12W', ' 6 h ', '\u30006h'];
    for (const d of days)
      for (const i of intervals) {
        expect(valid(PatchSourceBody, rf(d, i)), `${d} ${i}`).toBe(true);
        expect(() => validateRunFrequency({ numberOfPastDaysToSync: d, periodicInterval: i }), `${d} ${i}`).not.toThrow();
      }
  });
  it('verified searches: result fields from the fixed list', () => {
    // positive_data_acceptance (seed 12345): `fields: ["string"]` passed the schema, the server said 400.
    for (const schema of [VerifiedCompanyBody, VerifiedContactBody]) {
      expect(valid(schema, { fields: ['string'] })).toBe(false);
      expect(valid(schema, { fields: ['companyName', 'companyWebsite'] })).toBe(true);
    }
    expect(valid(VerifiedContactBody, { fields: ['fullName', 'emails'] })).toBe(true);
    expect(valid(VerifiedCompanyBody, { fields: ['fullName'] })).toBe(false);
  });
});
