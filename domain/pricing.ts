/**
 * Credit prices (API-SPEC "Limits", DESIGN §4). Plain data and functions so every charge is
 * computed in one place and unit-tested.
 */
export const DISCOVERY_PRICES = {
  'find-contacts-v2': 1,
  'find-companies-v2': 1,
  'find-verified-companies': 4,
  'find-verified-contacts': 4,
} as const;
export type DiscoveryOperation = keyof typeof DISCOVERY_PRICES;

/**
 * import-verified-companies: the companies were paid for by find-verified-companies and import
 * free; each verified person imported as a contact costs what find-verified-contacts costs.
 */
export const VERIFIED_IMPORT_PERSON_PRICE = DISCOVERY_PRICES['find-verified-contacts'];
export const verifiedImportDebitKey = (jobId: string, pronetKey: string) => `verified-import:${jobId}:${pronetKey}`;

export const ENRICHMENT_SLICES = ['basic_contact_data', 'basic_company_data', 'emails', 'phoneNumbers', 'pronetPosts'] as const;
export type EnrichmentSlice = (typeof ENRICHMENT_SLICES)[number];

/**
 * Price of a slice that found data, by how many providers were tried (1-based) until one did.
 * Emails cost 4/5/6 and phone numbers 10/20/30 for 1/2/3+ providers; the others are fixed.
 */
export function enrichmentSlicePrice(slice: EnrichmentSlice, providersTried: number): number {
  const n = Math.max(1, Math.min(3, Math.floor(providersTried)));
  switch (slice) {
    case 'basic_contact_data':
    case 'basic_company_data':
      return 1;
    case 'emails':
      return 3 + n;
    case 'phoneNumbers':
      return 10 * n;
    case 'pronetPosts':
      return 10;
  }
}

export function discoveryCharge(op: DiscoveryOperation, rowsReturned: number): number {
  return DISCOVERY_PRICES[op] * rowsReturned;
}
