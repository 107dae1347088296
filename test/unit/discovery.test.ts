/** Pure rules of the discovery search and the dataset tools. */
import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../domain/errors.js';
import { compileWhere, projectionOf } from '../../db/conditionSql.js';
import { compileSql } from '../../db/sqlFragments.js';
import { contactSearchColumns } from '../../db/discoveryColumns.js';
import { CsvRecordReader, RecordError, copyLine, parseCsvRecord, parseRecord } from '../../domain/datasetRecords.js';
import { contactSearchCatalog, companySearchCatalog } from '../../domain/discoveryCatalog.js';
import { v2SchemaItems, verifiedSchemaItems, verifiedSchemaMeta } from '../../domain/discoverySchemaItems.js';
import { VERIFIED_INPUTS, parseAmount, parseVerifiedInput } from '../../domain/verifiedSearchInput.js';
import { discoveryCharge } from '../../domain/pricing.js';

const fails = (fn: () => unknown, path: string) => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidRequestError);
    expect((e as InvalidRequestError).details?.[0]?.path).toBe(path);
    return;
  }
  throw new Error('expected a 400');
};

describe('verified input mapping', () => {
  it('parses every documented input', () => {
    const f = parseVerifiedInput('contact', [
      { sourceFieldName: 'numberOfContactsToPull', userInput: 40 },
      { sourceFieldName: 'companyIndustryInclude', userInput: ['Banking', 'Banking', 'Retail'] },
      { sourceFieldName: 'companyHeadcountRange', userInput: ['11-50', '10001+'] },
      { sourceFieldName: 'companyRevenue', userInput: { min: '1.5M', max: '2B', include_unknown_revenue: true } },
      { sourceFieldName: 'companyNameInclude', userInput: ['Acme Inc'] },
      { sourceFieldName: 'companyWebsiteInclude', userInput: ['https://www.Acme.com/about'] },
      { sourceFieldName: 'jobTitleInclude', userInput: ['VP Sales'] },
      { sourceFieldName: 'seniorityInclude', userInput: ['VP'] },
      { sourceFieldName: 'countryInclude', userInput: ['Germany'] },
    ]);
    expect(f).toEqual({
      pull: 40,
      industries: ['Banking', 'Retail'],
      headcountRanges: [[11, 50], [10001, 2147483647]],
      revenue: { min: 1_500_000, max: 2_000_000_000, includeUnknown: true },
      names: ['acme inc'],
      domains: ['acme.com'],
      titles: ['VP Sales'],
      seniorities: ['VP'],
      countries: ['Germany'],
    });
  });

  it('reads a range written high-low as the range between its ends', () => {
    const f = parseVerifiedInput('company', [
      { sourceFieldName: 'companyHeadcountRange', userInput: ['200-51', '11-50'] },
      { sourceFieldName: 'companyRevenue', userInput: { min: '2B', max: '1.5M' } },
    ]);
    expect(f.headcountRanges).toEqual([[51, 200], [11, 50]]);
    expect(f.revenue).toEqual({ min: 1_500_000, max: 2_000_000_000, includeUnknown: false });
  });

  it('enforces the list limits and names the entry', () => {
    const list = (n: number) => Array.from({ length: n }, (_, i) => `c${i}.com`);
    fails(() => parseVerifiedInput('company', [{ sourceFieldName: 'companyNameInclude', userInput: list(501) }]), '/inputFieldMapping/0/userInput');
    fails(() => parseVerifiedInput('company', [{ sourceFieldName: 'companyWebsiteInclude', userInput: list(501) }]), '/inputFieldMapping/0/userInput');
    fails(
      () => parseVerifiedInput('company', [{ sourceFieldName: 'companyNameInclude', userInput: list(250) }, { sourceFieldName: 'companyWebsiteInclude', userInput: list(251) }]),
      '/inputFieldMapping',
    );
    expect(() => parseVerifiedInput('company', [{ sourceFieldName: 'companyNameInclude', userInput: list(250) }, { sourceFieldName: 'companyWebsiteInclude', userInput: list(250) }])).not.toThrow();
    fails(() => parseVerifiedInput('company', [{ sourceFieldName: 'seniorityInclude', userInput: ['VP'] }]), '/inputFieldMapping/0/sourceFieldName');
    // an input given twice: each checked, the first applies (issue 27 item 21: uniqueness by name is beyond the schema)
    expect(parseVerifiedInput('company', [{ sourceFieldName: 'numberOfCompaniesToPull', userInput: 5 }, { sourceFieldName: 'numberOfCompaniesToPull', userInput: 7 }]).pull).toBe(5);
    fails(() => parseVerifiedInput('company', [{ sourceFieldName: 'numberOfCompaniesToPull', userInput: 5 }, { sourceFieldName: 'numberOfCompaniesToPull', userInput: 0 }]), '/inputFieldMapping/1/userInput');
    fails(() => parseVerifiedInput('company', [{ sourceFieldName: 'numberOfCompaniesToPull', userInput: 0 }]), '/inputFieldMapping/0/userInput');
    fails(() => parseVerifiedInput('company', [{ sourceFieldName: 'companyRevenue', userInput: { minimum: '5' } }]), '/inputFieldMapping/0/userInput/minimum');
    fails(() => parseVerifiedInput('company', [{ sourceFieldName: 'companyWebsiteInclude', userInput: ['not a site'] }]), '/inputFieldMapping/0/userInput/0');
  });

  it('parses amounts', () => {
    expect(parseAmount('5000000', '/x')).toBe(5_000_000);
    expect(parseAmount('750k', '/x')).toBe(750_000);
    expect(parseAmount('$2,500,000', '/x')).toBe(2_500_000);
    expect(parseAmount('', '/x')).toBeNull();
    fails(() => parseAmount('lots', '/x'), '/x');
  });

  it('every example input parses', () => {
    for (const entity of ['company', 'contact'] as const)
      for (const d of VERIFIED_INPUTS[entity]) expect(() => parseVerifiedInput(entity, [{ sourceFieldName: d.name, userInput: d.exampleUserInput }])).not.toThrow();
  });
});

describe('catalogs', () => {
  it('v2 catalogs list the spec paths; company search offers person paths as filters and as contacts[] values', () => {
    const names = v2SchemaItems('contact').map((i) => i.name);
    for (const p of ['dsContact.member_job_title', 'dsContact.member_full_name', 'dsCompany.industry', 'dsCompany.company_name', 'dsCompany.size_range'])
      expect(names).toContain(p);
    expect(contactSearchCatalog.get('dsCompany.industry')!.output).toEqual(['company', 'companyIndustry']);
    expect(companySearchCatalog.get('dsCompany.size_range')!.output).toEqual(['companyHeadcount']);
    expect(v2SchemaItems('company').find((i) => i.name === 'dsContact.member_seniority')).toMatchObject({ selectable: true, readAccessPath: 'contacts[].seniority' });
  });

  it('verified items carry every property of the spec', () => {
    const items = verifiedSchemaItems('company', () => ({ options: [{ label: 'x', value: 'x' }], hasMore: true }));
    const revenue = items.find((i) => i.name === 'companyRevenue')!;
    expect(revenue.childFields.map((c) => c.name)).toEqual(['companyRevenue.min', 'companyRevenue.max', 'companyRevenue.include_unknown_revenue']);
    expect(revenue.childFields.every((c) => c.parentField === 'companyRevenue')).toBe(true);
    const industry = items.find((i) => i.name === 'companyIndustryInclude')!;
    expect(industry).toMatchObject({ writeAccessPath: 'companyIndustryInclude', optionsLink: '/schema/verified-discovery/company/options?field=companyIndustryInclude', hasMoreOptions: true });
    expect(verifiedSchemaMeta('contact')).toMatchObject({ schemaVersion: 'verified-v1', groupsOrder: ['Limits', 'Contact', 'Company'] });
  });

  it('prices rows', () => {
    expect(discoveryCharge('find-contacts-v2', 7)).toBe(7);
    expect(discoveryCharge('find-verified-contacts', 3)).toBe(12);
    expect(discoveryCharge('find-verified-companies', 0)).toBe(0);
  });
});

describe('dataset records', () => {
  it('normalises and validates', () => {
    const r = parseRecord('companies', { company_pronet_url: 'HTTPS://www.pronet.com/company/Acme/', company_website: 'https://www.acme.io/x', technologies: ['A', 'A', ' B '] });
    expect(r.key).toBe('pronet.com/company/acme');
    expect(r.values[r.values.length - 1]).toBe('acme.io');
    expect(() => parseRecord('companies', { company_pronet_url: 'x/y', size_range: '50-10' })).toThrow(RecordError);
    expect(() => parseRecord('people', { member_pronet_url: 'pronet.com/in/a', member_emails: [{ email: 'a@b.co', status: 'valid', extra: 1 }] })).toThrow(/unknown property extra/);
    expect(() => parseRecord('people', { member_full_name: 'x' })).toThrow(/member_pronet_url is required/);
  });

  it('reads whole numbers in decimal notation and timestamps that exist on the calendar, as the API does', () => {
    const company = (extra: Record<string, unknown>) => parseRecord('companies', { company_pronet_url: 'pronet.com/company/acme', ...extra });
    const post = (posted_at: string) => parseRecord('posts', { post_url: 'pronet.com/posts/1', member_pronet_url: 'pronet.com/in/ada', posted_at });
    expect(company({ employee_count: ' 42 ' }).values).toContain(42);
    expect(company({ employee_count: '1e3' }).values).toContain(1000);
    for (const n of ['0x10', '0b1', '0o7', 'Infinity']) expect(() => company({ employee_count: n }), n).toThrow(/employee_count must be a whole number/);
    expect(post('2026-03-01T10:00:00Z').values).toContain('2026-03-01T10:00:00.000Z');
    // Date.parse rolls these over (2 March, the next day) or reads year 0, which PostgreSQL has not
    for (const t of ['2026-02-30T10:00:00Z', '2026-03-01T24:30:00Z', '0000-01-01T00:00:00Z', '2026-03-01 and then some']) expect(() => post(t), t).toThrow(/posted_at must be an ISO 8601 timestamp/);
  });

  it('encodes COPY text lines with escapes, arrays and nulls', () => {
    expect(copyLine([1, 'id'], ['a\tb\\c\nd', null, ['x"y', 'z'], 3, true, '[{"e":1}]'])).toBe('1\tid\ta\\tb\\\\c\\nd\t\\N\t{"x\\\\"y","z"}\t3\ttrue\t[{"e":1}]\n');
  });

  it('reads CSV records across lines', () => {
    expect(parseCsvRecord('a,"b,c","d ""q"""')).toEqual(['a', 'b,c', 'd "q"']);
    expect(parseCsvRecord('a,"open')).toBeNull();
    expect(parseCsvRecord('a,,')).toEqual(['a', '', '']);
    const r = new CsvRecordReader();
    expect(r.push('1,"two')).toBeNull();
    expect(r.push('lines",3')).toEqual(['1', 'two\nlines', '3']);
    expect(r.unterminated).toBe(false);
  });
});

describe('discovery output shapes (issue 12)', () => {
  it('profile URLs answer as https URLs and match any form; emails answer as strings with their statuses beside', () => {
    const projection = projectionOf(contactSearchColumns, ['dsContact.member_pronet_url', 'dsContact.member_emails', 'dsCompany.company_pronet_url'].map((p) => contactSearchColumns.get(p)!));
    const item = projection.shape({ id: 'x', f0: 'pronet.com/in/ada', f1: [{ email: 'a@b.io', status: 'valid' }, { email: 'c@d.io' }], f2: null });
    expect(item).toEqual({
      id: 'x',
      pronet: 'https://pronet.com/in/ada',
      emails: ['a@b.io', 'c@d.io'],
      emailStatuses: [{ email: 'a@b.io', status: 'valid' }, { email: 'c@d.io', status: null }],
      company: { companyPronet: null },
    });
    const where = compileWhere(contactSearchColumns, { conditions: [{ field: 'dsContact.member_pronet_url', operator: 'IN', value: ['HTTPS://www.Pronet.com/in/Ada/?x=1', 'pronet.com/in/bob'] }] });
    expect(compileSql(where.sql).values).toContainEqual(['pronet.com/in/ada', 'pronet.com/in/bob']);
  });
});
