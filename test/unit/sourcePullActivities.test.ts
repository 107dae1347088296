/** Pure parts of the source-pull activities: person → contact input, provider failure → Temporal failure. */
import { describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import { personToContactInput, providerFailure } from '../../activities/dbSources.js';
import { ListeningProviderError } from '../../activities/providers/listening.js';

describe('personToContactInput', () => {
  it('keys the row on the normalised profile URL and maps the catalog fields', () => {
    expect(
      personToContactInput(
        {
          pronet: 'https://www.Pronet.com/in/Ann-Fan/?trk=x',
          firstName: ' Ann ',
          lastName: 'Fan',
          jobTitle: 'Engineer',
          emails: ['ANN@Acme.com', 'not-an-email', 'ann@acme.com'],
          company: { companyName: 'Acme', companyWebsite: 'https://acme.com', companyHeadcount: '51-200', companyIndustry: null },
          interaction: { type: 'like', postUrl: null, occurredAt: '2026-11-21T00:00:00.000Z' },
        },
        'pull:http',
      ),
    ).toEqual({
      rowKey: 'p:pronet.com/in/ann-fan',
      origin: 'pull:http',
      pronet: 'https://www.Pronet.com/in/Ann-Fan/?trk=x',
      pronetKey: 'pronet.com/in/ann-fan',
      firstName: 'Ann',
      lastName: 'Fan',
      fullName: 'Ann Fan',
      title: 'Engineer',
      emails: ['ann@acme.com'],
      workEmail: 'ann@acme.com',
      company: { companyName: 'Acme', companyWebsite: 'https://acme.com', companyHeadcount: '51-200' },
    });
  });
  it('skips a person without a usable profile URL and omits an empty company', () => {
    const base = { interaction: { type: 'post', postUrl: null, occurredAt: '2026-11-21T00:00:00.000Z' } };
    expect(personToContactInput({ ...base, pronet: '   ' }, 'o')).toBeNull();
    const c = personToContactInput({ ...base, pronet: 'pronet.com/in/x', company: { companyIndustry: 'Retail' } }, 'o');
    expect(c).not.toHaveProperty('company');
    expect(c).not.toHaveProperty('fullName');
  });
});

describe('providerFailure', () => {
  const f = (e: ListeningProviderError) => providerFailure(e) as ApplicationFailure;
  it('credentials and invalid input are final', () => {
    expect(f(new ListeningProviderError('credentials', 'revoked'))).toMatchObject({ type: 'provider_credentials_invalid', nonRetryable: true, message: 'revoked' });
    expect(f(new ListeningProviderError('invalid_input', 'bad'))).toMatchObject({ type: 'provider_rejected_query', nonRetryable: true });
  });
  it('rate limits retry after the provider delay; transient failures retry', () => {
    expect(f(new ListeningProviderError('rate_limited', 'slow down', 7000))).toMatchObject({ type: 'provider_rate_limited', nonRetryable: false, nextRetryDelay: 7000 });
    expect(f(new ListeningProviderError('transient', 'down'))).toMatchObject({ type: 'provider_unavailable', nonRetryable: false });
  });
  it('passes other errors through', () => {
    const e = new Error('db down');
    expect(providerFailure(e)).toBe(e);
  });
});
