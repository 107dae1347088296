/**
 * Deterministic generator of a realistic discovery dataset (DESIGN §6): companies, people and
 * posts in the import format of `npm run dataset -- import` (keys are the catalog names without
 * prefix). The same (seed, sizes) always yields the same records, so demos, tests and benchmarks
 * need no download. Every record is derived from its own PRNG stream (seed + kind + index),
 * so any slice can be produced independently and generation streams in constant memory
 * (apart from one small summary per company, used to place people in companies).
 *
 * Distributions are deliberately skewed like real B2B data: a few countries and industries
 * dominate, small companies are far more common than large ones, large companies employ more of
 * the people, and junior/senior individual contributors outnumber executives.
 */

export interface DsCompanyRecord {
  company_pronet_url: string;
  company_name: string;
  company_website: string;
  industry: string;
  size_range: string;
  employee_count: number;
  revenue_min: number | null;
  revenue_max: number | null;
  founded_year: number;
  hq_city: string;
  hq_state: string | null;
  hq_country: string;
  technologies: string[];
  verified: boolean;
}

export interface DsEmail {
  email: string;
  status: string;
}
export interface DsPhone {
  number: string;
  type: string;
}

export interface DsPersonRecord {
  member_pronet_url: string;
  member_full_name: string;
  member_first_name: string;
  member_last_name: string;
  member_job_title: string;
  member_seniority: string;
  member_headline: string;
  member_location_city: string;
  member_location_country: string;
  member_skills: string[];
  member_years_experience: number;
  member_emails: DsEmail[];
  member_phones: DsPhone[];
  company_pronet_url: string | null;
  verified: boolean;
}

export interface DsPostRecord {
  member_pronet_url: string;
  post_url: string;
  text: string;
  posted_at: string;
  likes: number;
  comments: number;
  interaction_type: string | null;
  author_pronet_url: string | null;
}

// ---------------------------------------------------------------------------------------------
// Vocabulary (also the option lists of the catalogs)

export const SIZE_RANGES = ['1-10', '11-50', '51-200', '201-500', '501-1000', '1001-5000', '5001-10000', '10001-100000'] as const;
const SIZE_WEIGHTS = [30, 28, 18, 9, 6, 5, 2, 2];

export const SENIORITIES = ['Owner', 'CXO', 'VP', 'Director', 'Manager', 'Senior', 'Entry', 'Intern'] as const;
const SENIORITY_WEIGHTS = [3, 3, 4, 8, 17, 30, 30, 5];

export const INDUSTRIES = [
  'Software Development',
  'IT Services and IT Consulting',
  'Financial Services',
  'Hospital and Health Care',
  'Retail',
  'Manufacturing',
  'Higher Education',
  'Marketing and Advertising',
  'Construction',
  'Real Estate',
  'Telecommunications',
  'Insurance',
  'Banking',
  'Staffing and Recruiting',
  'Logistics and Supply Chain',
  'Biotechnology',
  'Automotive',
  'Food and Beverage',
  'Media Production',
  'Legal Services',
  'Renewable Energy',
  'Computer Games',
  'Non-profit Organizations',
  'Government Administration',
] as const;
const INDUSTRY_WEIGHTS = INDUSTRIES.map((_, i) => 1 / Math.pow(i + 1, 0.8));

interface CountryDef {
  name: string;
  code: string;
  tld: string;
  phone: string;
  weight: number;
  cities: [string, string | null][];
}
export const COUNTRIES: CountryDef[] = [
  { name: 'United States', code: 'US', tld: 'com', phone: '+1', weight: 42, cities: [['New York', 'NY'], ['San Francisco', 'CA'], ['Austin', 'TX'], ['Seattle', 'WA'], ['Boston', 'MA'], ['Chicago', 'IL'], ['Los Angeles', 'CA'], ['Denver', 'CO'], ['Atlanta', 'GA'], ['Miami', 'FL']] },
  { name: 'United Kingdom', code: 'GB', tld: 'co.uk', phone: '+44', weight: 10, cities: [['London', 'England'], ['Manchester', 'England'], ['Edinburgh', 'Scotland'], ['Bristol', 'England']] },
  { name: 'India', code: 'IN', tld: 'in', phone: '+91', weight: 9, cities: [['Bengaluru', 'Karnataka'], ['Mumbai', 'Maharashtra'], ['Hyderabad', 'Telangana'], ['Pune', 'Maharashtra']] },
  { name: 'Germany', code: 'DE', tld: 'de', phone: '+49', weight: 7, cities: [['Berlin', 'Berlin'], ['Munich', 'Bavaria'], ['Hamburg', 'Hamburg'], ['Frankfurt', 'Hesse']] },
  { name: 'Canada', code: 'CA', tld: 'ca', phone: '+1', weight: 6, cities: [['Toronto', 'ON'], ['Vancouver', 'BC'], ['Montreal', 'QC']] },
  { name: 'France', code: 'FR', tld: 'fr', phone: '+33', weight: 5, cities: [['Paris', 'Île-de-France'], ['Lyon', 'Auvergne-Rhône-Alpes'], ['Toulouse', 'Occitanie']] },
  { name: 'Australia', code: 'AU', tld: 'com.au', phone: '+61', weight: 4, cities: [['Sydney', 'NSW'], ['Melbourne', 'VIC'], ['Brisbane', 'QLD']] },
  { name: 'Netherlands', code: 'NL', tld: 'nl', phone: '+31', weight: 3, cities: [['Amsterdam', 'North Holland'], ['Rotterdam', 'South Holland'], ['Utrecht', 'Utrecht']] },
  { name: 'Brazil', code: 'BR', tld: 'com.br', phone: '+55', weight: 3, cities: [['São Paulo', 'SP'], ['Rio de Janeiro', 'RJ']] },
  { name: 'Spain', code: 'ES', tld: 'es', phone: '+34', weight: 2, cities: [['Madrid', 'Madrid'], ['Barcelona', 'Catalonia']] },
  { name: 'Singapore', code: 'SG', tld: 'sg', phone: '+65', weight: 2, cities: [['Singapore', null]] },
  { name: 'Sweden', code: 'SE', tld: 'se', phone: '+46', weight: 2, cities: [['Stockholm', 'Stockholm'], ['Gothenburg', 'Västra Götaland']] },
  { name: 'Israel', code: 'IL', tld: 'co.il', phone: '+972', weight: 2, cities: [['Tel Aviv', 'Tel Aviv'], ['Haifa', 'Haifa']] },
  { name: 'Ireland', code: 'IE', tld: 'ie', phone: '+353', weight: 1.5, cities: [['Dublin', 'Leinster'], ['Cork', 'Munster']] },
  { name: 'Japan', code: 'JP', tld: 'jp', phone: '+81', weight: 1.5, cities: [['Tokyo', 'Tokyo'], ['Osaka', 'Osaka']] },
];

export const TECHNOLOGIES = [
  'Salesforce', 'HubSpot', 'Google Analytics', 'AWS', 'Google Cloud', 'Microsoft Azure', 'Slack', 'Zoom', 'Shopify', 'WordPress',
  'React', 'Angular', 'Vue.js', 'Node.js', 'Python', 'Java', 'Go', 'Kubernetes', 'Docker', 'PostgreSQL',
  'MySQL', 'MongoDB', 'Snowflake', 'Databricks', 'Segment', 'Stripe', 'Zendesk', 'Intercom', 'Marketo', 'Okta',
  'Jira', 'Confluence', 'GitHub', 'GitLab', 'Datadog', 'Tableau', 'Looker', 'SAP', 'Oracle', 'Workday',
] as const;
const TECH_WEIGHTS = TECHNOLOGIES.map((_, i) => 1 / Math.pow(i + 1, 0.6));

const FUNCTIONS: { name: string; titles: Record<(typeof SENIORITIES)[number], string[]>; skills: string[]; weight: number }[] = [
  {
    name: 'Engineering', weight: 22,
    titles: { Owner: ['Founder & CTO'], CXO: ['Chief Technology Officer'], VP: ['VP of Engineering'], Director: ['Director of Engineering'], Manager: ['Engineering Manager'], Senior: ['Senior Software Engineer', 'Staff Engineer', 'Senior Backend Engineer'], Entry: ['Software Engineer', 'Frontend Developer', 'Backend Developer'], Intern: ['Software Engineering Intern'] },
    skills: ['TypeScript', 'Java', 'Python', 'Go', 'Kubernetes', 'PostgreSQL', 'System Design', 'AWS', 'React', 'CI/CD'],
  },
  {
    name: 'Sales', weight: 18,
    titles: { Owner: ['Founder & CEO'], CXO: ['Chief Revenue Officer'], VP: ['VP of Sales'], Director: ['Director of Sales'], Manager: ['Sales Manager', 'Account Manager'], Senior: ['Senior Account Executive', 'Enterprise Account Executive'], Entry: ['Sales Development Representative', 'Account Executive'], Intern: ['Sales Intern'] },
    skills: ['Negotiation', 'Salesforce', 'Prospecting', 'B2B Sales', 'Account Management', 'Cold Calling', 'Pipeline Management'],
  },
  {
    name: 'Marketing', weight: 12,
    titles: { Owner: ['Founder'], CXO: ['Chief Marketing Officer'], VP: ['VP of Marketing'], Director: ['Director of Marketing', 'Director of Demand Generation'], Manager: ['Marketing Manager', 'Product Marketing Manager'], Senior: ['Senior Marketing Specialist', 'Senior Content Strategist'], Entry: ['Marketing Coordinator', 'Growth Marketer'], Intern: ['Marketing Intern'] },
    skills: ['SEO', 'Content Marketing', 'HubSpot', 'Demand Generation', 'Google Ads', 'Brand Strategy', 'Copywriting'],
  },
  {
    name: 'Finance', weight: 8,
    titles: { Owner: ['Managing Partner'], CXO: ['Chief Financial Officer'], VP: ['VP of Finance'], Director: ['Finance Director', 'Director of FP&A'], Manager: ['Finance Manager', 'Controller'], Senior: ['Senior Financial Analyst', 'Senior Accountant'], Entry: ['Financial Analyst', 'Accountant'], Intern: ['Finance Intern'] },
    skills: ['Financial Modeling', 'Excel', 'Budgeting', 'IFRS', 'Forecasting', 'Accounting'],
  },
  {
    name: 'Human Resources', weight: 7,
    titles: { Owner: ['Founder'], CXO: ['Chief People Officer'], VP: ['VP of People'], Director: ['HR Director', 'Director of Talent Acquisition'], Manager: ['HR Manager', 'Recruiting Manager'], Senior: ['Senior Recruiter', 'Senior HR Business Partner'], Entry: ['Recruiter', 'HR Generalist'], Intern: ['HR Intern'] },
    skills: ['Recruiting', 'Employee Relations', 'Workday', 'Talent Management', 'Onboarding'],
  },
  {
    name: 'Operations', weight: 10,
    titles: { Owner: ['Owner'], CXO: ['Chief Operating Officer'], VP: ['VP of Operations'], Director: ['Director of Operations'], Manager: ['Operations Manager', 'Project Manager'], Senior: ['Senior Operations Analyst', 'Senior Project Manager'], Entry: ['Operations Analyst', 'Operations Coordinator'], Intern: ['Operations Intern'] },
    skills: ['Process Improvement', 'Project Management', 'Lean Six Sigma', 'Supply Chain', 'Vendor Management'],
  },
  {
    name: 'Product', weight: 8,
    titles: { Owner: ['Co-Founder'], CXO: ['Chief Product Officer'], VP: ['VP of Product'], Director: ['Director of Product Management'], Manager: ['Product Manager', 'Group Product Manager'], Senior: ['Senior Product Manager', 'Senior Product Designer'], Entry: ['Associate Product Manager', 'Product Designer'], Intern: ['Product Intern'] },
    skills: ['Product Strategy', 'Roadmapping', 'User Research', 'Agile', 'Figma', 'Analytics'],
  },
  {
    name: 'Data', weight: 7,
    titles: { Owner: ['Founder'], CXO: ['Chief Data Officer'], VP: ['VP of Data'], Director: ['Director of Data Science'], Manager: ['Data Science Manager', 'Analytics Manager'], Senior: ['Senior Data Scientist', 'Senior Data Engineer'], Entry: ['Data Analyst', 'Data Engineer', 'Data Scientist'], Intern: ['Data Science Intern'] },
    skills: ['SQL', 'Python', 'Machine Learning', 'Snowflake', 'dbt', 'Statistics', 'Tableau'],
  },
  {
    name: 'Customer Success', weight: 8,
    titles: { Owner: ['Founder'], CXO: ['Chief Customer Officer'], VP: ['VP of Customer Success'], Director: ['Director of Customer Success', 'Director of Support'], Manager: ['Customer Success Manager', 'Support Manager'], Senior: ['Senior Customer Success Manager', 'Senior Support Engineer'], Entry: ['Customer Success Associate', 'Support Specialist'], Intern: ['Customer Support Intern'] },
    skills: ['Customer Retention', 'Zendesk', 'Onboarding', 'Account Management', 'Churn Reduction'],
  },
];
const FUNCTION_WEIGHTS = FUNCTIONS.map((f) => f.weight);

const FIRST_NAMES = [
  'James', 'Mary', 'Robert', 'Patricia', 'John', 'Jennifer', 'Michael', 'Linda', 'David', 'Elizabeth', 'William', 'Barbara', 'Richard', 'Susan',
  'Joseph', 'Jessica', 'Thomas', 'Sarah', 'Charles', 'Karen', 'Daniel', 'Lisa', 'Matthew', 'Nancy', 'Anthony', 'Sandra', 'Mark', 'Ashley',
  'Priya', 'Arjun', 'Wei', 'Mei', 'Hiroshi', 'Yuki', 'Lukas', 'Anna', 'Léa', 'Hugo', 'Sofia', 'Mateo', 'Olivia', 'Noah', 'Emma', 'Liam',
  'Ava', 'Ethan', 'Mia', 'Lucas', 'Chloe', 'Aiden', 'Fatima', 'Omar', 'Ingrid', 'Lars', 'Aoife', 'Sean', 'Noa', 'Yosef', 'Camila', 'Diego',
];
const LAST_NAMES = [
  'Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Rodriguez', 'Martinez', 'Hernandez', 'Lopez', 'Gonzalez',
  'Wilson', 'Anderson', 'Thomas', 'Taylor', 'Moore', 'Jackson', 'Martin', 'Lee', 'Perez', 'Thompson', 'White', 'Harris', 'Sanchez', 'Clark',
  'Patel', 'Sharma', 'Chen', 'Wang', 'Tanaka', 'Sato', 'Müller', 'Schmidt', 'Dubois', 'Moreau', 'Rossi', 'Silva', 'Santos', 'Kim', 'Park',
  'Nguyen', 'Cohen', 'Levi', "O'Brien", 'Murphy', 'Andersson', 'Johansson', 'de Jong', 'van Dijk', 'Novak', 'Kowalski', 'Costa', 'Ali',
];
const NAME_PREFIX = ['Blue', 'North', 'Bright', 'Apex', 'Nova', 'Silver', 'Green', 'Iron', 'Clear', 'Summit', 'Quantum', 'Cedar', 'Red', 'Atlas', 'Vertex', 'Harbor', 'Pioneer', 'Lumen', 'Orbit', 'Crest', 'Stone', 'River', 'Sky', 'Pine', 'Golden', 'Prime', 'Urban', 'Swift', 'Bold', 'True'];
const NAME_CORE = ['field', 'wave', 'stack', 'point', 'labs', 'works', 'path', 'bridge', 'logic', 'scale', 'forge', 'line', 'gate', 'mind', 'flow', 'grid', 'spark', 'leaf', 'rock', 'view'];
const NAME_SUFFIX = ['', ' Inc', ' Group', ' Technologies', ' Solutions', ' Partners', ' Systems', ' Health', ' Capital', ' Analytics', ' Labs', ' Co'];
const EMAIL_STATUSES = ['valid', 'valid', 'valid', 'catch_all', 'unknown', 'invalid'];
const POST_TOPICS = ['hiring', 'product launch', 'conference', 'funding round', 'team offsite', 'case study', 'webinar', 'new role', 'industry report', 'open source'];

// ---------------------------------------------------------------------------------------------
// Deterministic randomness

/** 32-bit string/number hash (FNV-1a over the parts). */
function hash32(...parts: (string | number)[]): number {
  let h = 0x811c9dc5;
  for (const part of parts) {
    const s = String(part);
    for (let i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i);
      h = Math.imul(h, 0x01000193);
    }
    h ^= 0x2c;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: a small, fast, well-distributed PRNG. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  static of(...parts: (string | number)[]): Rng {
    return new Rng(hash32(...parts));
  }
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  weighted<T>(items: readonly T[], cumulative: number[]): T {
    const x = this.next() * cumulative[cumulative.length - 1]!;
    return items[bisect(cumulative, x)]!;
  }
  sample<T>(items: readonly T[], cumulative: number[], n: number): T[] {
    const out = new Set<T>();
    for (let guard = 0; out.size < n && guard < n * 10; guard++) out.add(this.weighted(items, cumulative));
    return [...out];
  }
}

function cumulate(weights: number[]): number[] {
  let acc = 0;
  return weights.map((w) => (acc += w));
}
function bisect(cum: number[], x: number): number {
  let lo = 0;
  let hi = cum.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cum[mid]! > x) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

const CUM = {
  size: cumulate(SIZE_WEIGHTS),
  seniority: cumulate(SENIORITY_WEIGHTS),
  industry: cumulate(INDUSTRY_WEIGHTS),
  country: cumulate(COUNTRIES.map((c) => c.weight)),
  tech: cumulate(TECH_WEIGHTS),
  fn: cumulate(FUNCTION_WEIGHTS),
};

function slug(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

// ---------------------------------------------------------------------------------------------
// Records

/**
 * Default reference instant (posts are dated up to 90 days before it), fixed so that generated
 * timestamps do not depend on the clock. The demo dataset passes the time it is loaded instead,
 * so that source pulls, which look back from now, find its posts.
 */
export const REFERENCE_TIME = Date.UTC(2026, 10, 1);

export function generateCompany(seed: number, i: number): DsCompanyRecord {
  const r = Rng.of(seed, 'company', i);
  const name = `${r.pick(NAME_PREFIX)}${r.pick(NAME_CORE)}${r.pick(NAME_SUFFIX)}`;
  const country = r.weighted(COUNTRIES, CUM.country);
  const [city, state] = r.pick(country.cities);
  const sizeIdx = SIZE_RANGES.indexOf(r.weighted(SIZE_RANGES, CUM.size));
  const [lo, hi] = SIZE_RANGES[sizeIdx]!.split('-').map(Number) as [number, number];
  // log-uniform within the range, so most companies sit near its lower end
  const employees = Math.min(hi, Math.max(lo, Math.round(Math.exp(Math.log(lo) + r.next() * (Math.log(hi) - Math.log(lo))))));
  const perHead = r.int(60, 400) * 1000;
  const revenueKnown = r.chance(0.8);
  const revenue = employees * perHead;
  const base = slug(name.replace(/ (Inc|Group|Co)$/, ''));
  const domain = `${base}${i}.${country.tld}`;
  return {
    company_pronet_url: `https://www.pronet.com/company/${base}-${i}`,
    company_name: name,
    company_website: `https://www.${domain}`,
    industry: r.weighted(INDUSTRIES, CUM.industry),
    size_range: SIZE_RANGES[sizeIdx]!,
    employee_count: employees,
    revenue_min: revenueKnown ? Math.round(revenue * 0.8) : null,
    revenue_max: revenueKnown ? Math.round(revenue * 1.25) : null,
    founded_year: 2025 - Math.min(120, Math.floor(-Math.log(1 - r.next()) * (8 + sizeIdx * 6))),
    hq_city: city,
    hq_state: state,
    hq_country: country.name,
    technologies: r.sample(TECHNOLOGIES, CUM.tech, r.int(2, 9)),
    verified: r.chance(0.6),
  };
}

/** The part of a company that people placement needs, and the weight that makes big companies employ more people. */
export interface CompanyPick {
  url: string;
  name: string;
  domain: string;
  country: string;
  weight: number;
}
export function companyPick(c: DsCompanyRecord): CompanyPick {
  return {
    url: c.company_pronet_url,
    name: c.company_name,
    domain: c.company_website.replace(/^https?:\/\/(www\.)?/, ''),
    country: c.hq_country,
    weight: Math.sqrt(c.employee_count),
  };
}

export class CompanyPicker {
  private cum: number[];
  constructor(readonly picks: CompanyPick[]) {
    this.cum = cumulate(picks.map((s) => s.weight));
  }
  pick(r: Rng): CompanyPick | null {
    if (!this.picks.length) return null;
    return this.picks[bisect(this.cum, r.next() * this.cum[this.cum.length - 1]!)]!;
  }
}

/** Profile URL of person `i` (the first draws of its stream), without generating the rest. */
export function personUrl(seed: number, i: number): string {
  const r = Rng.of(seed, 'person', i);
  const first = r.pick(FIRST_NAMES);
  const last = r.pick(LAST_NAMES);
  return `https://www.pronet.com/in/${slug(first)}-${slug(last)}-${i.toString(36)}`;
}

export function generatePerson(seed: number, i: number, companies: CompanyPicker): DsPersonRecord {
  const r = Rng.of(seed, 'person', i);
  const first = r.pick(FIRST_NAMES);
  const last = r.pick(LAST_NAMES);
  const company = r.chance(0.95) ? companies.pick(r) : null;
  // people mostly live where their company is
  const countryDef = company && r.chance(0.8) ? COUNTRIES.find((c) => c.name === company.country)! : r.weighted(COUNTRIES, CUM.country);
  const [city] = r.pick(countryDef.cities);
  const seniority = r.weighted(SENIORITIES, CUM.seniority);
  const fn = r.weighted(FUNCTIONS, CUM.fn);
  const title = r.pick(fn.titles[seniority]);
  const years = Math.max(0, Math.min(45, Math.round(({ Owner: 18, CXO: 20, VP: 16, Director: 13, Manager: 9, Senior: 7, Entry: 2, Intern: 0 } as const)[seniority] + (r.next() - 0.3) * 10)));
  const skills = r.sample(fn.skills, cumulate(fn.skills.map(() => 1)), r.int(2, 6));
  const local = `${slug(first)}.${slug(last)}`.replace(/-/g, '');
  const emails: DsEmail[] = [];
  if (company && r.chance(0.7)) emails.push({ email: `${local}@${company.domain}`, status: r.pick(EMAIL_STATUSES) });
  if (r.chance(0.35)) emails.push({ email: `${local}${r.int(1, 99)}@${r.pick(['gmail.com', 'outlook.com', 'yahoo.com', 'proton.me'])}`, status: r.pick(EMAIL_STATUSES) });
  const phones: DsPhone[] = [];
  if (r.chance(0.4)) phones.push({ number: `${countryDef.phone} ${r.int(200, 989)} ${r.int(100, 999)} ${String(r.int(0, 9999)).padStart(4, '0')}`, type: r.pick(['mobile', 'mobile', 'work', 'direct']) });
  return {
    member_pronet_url: personUrl(seed, i),
    member_full_name: `${first} ${last}`,
    member_first_name: first,
    member_last_name: last,
    member_job_title: title,
    member_seniority: seniority,
    member_headline: company ? `${title} at ${company.name}` : `${title} | ${fn.name}`,
    member_location_city: city,
    member_location_country: countryDef.name,
    member_skills: skills,
    member_years_experience: years,
    member_emails: emails,
    member_phones: phones,
    company_pronet_url: company?.url ?? null,
    verified: r.chance(0.5),
  };
}

/** How many posts/interactions person `i` has (about a fifth of the people are active, 1-4 times). */
function postCount(seed: number, i: number): number {
  const r = Rng.of(seed, 'posts', i);
  return r.chance(0.2) ? r.int(1, 4) : 0;
}
const isInteraction = (seed: number, i: number, k: number) => Rng.of(seed, 'post', i, k).chance(0.3);
const authoredPostUrl = (i: number, k: number) => `https://www.pronet.com/posts/${i.toString(36)}-${k}`;

/** URLs of the posts person `j` authored (not interactions). */
function authoredPosts(seed: number, j: number): string[] {
  const out: string[] = [];
  for (let k = 0; k < postCount(seed, j); k++) if (!isInteraction(seed, j, k)) out.push(authoredPostUrl(j, k));
  return out;
}

/**
 * Posts of person `i`: authored posts (`interaction_type` null, `author_pronet_url` = the person)
 * and interactions (like/comment) with a post another person authored; an interaction's
 * `post_url` is the original's URL plus `/reactions/<member>` or `/comments/<id>`.
 */
export function generatePosts(seed: number, i: number, person: DsPersonRecord, peopleCount: number, referenceTime = REFERENCE_TIME): DsPostRecord[] {
  const out: DsPostRecord[] = [];
  const n = postCount(seed, i);
  const memberSlug = person.member_pronet_url.replace(/^.*\/in\//, '');
  for (let k = 0; k < n; k++) {
    const r = Rng.of(seed, 'post', i, k);
    const interaction = r.chance(0.3) ? r.pick(['like', 'comment'] as const) : null;
    const topic = r.pick(POST_TOPICS);
    const postedAt = new Date(referenceTime - r.int(0, 90 * 24 * 3600) * 1000).toISOString();
    const likes = Math.floor(-Math.log(1 - r.next()) * 40);
    const comments = Math.floor(-Math.log(1 - r.next()) * 6);
    if (!interaction) {
      out.push({
        member_pronet_url: person.member_pronet_url,
        post_url: authoredPostUrl(i, k),
        text: `Excited to share our ${topic}! ${person.member_job_title} thoughts on what comes next. #${slug(topic).replace(/-/g, '')}`,
        posted_at: postedAt,
        likes,
        comments,
        interaction_type: null,
        author_pronet_url: person.member_pronet_url,
      });
      continue;
    }
    // the original: an authored post of someone else (a few tries; no target → no interaction)
    let target: { url: string; author: number } | null = null;
    for (let attempt = 0; attempt < 25 && !target && peopleCount > 1; attempt++) {
      const j = r.int(0, peopleCount - 1);
      if (j === i) continue;
      const posts = authoredPosts(seed, j);
      if (posts.length) target = { url: r.pick(posts), author: j };
    }
    if (!target) continue;
    out.push({
      member_pronet_url: person.member_pronet_url,
      post_url: interaction === 'like' ? `${target.url}/reactions/${memberSlug}` : `${target.url}/comments/${i.toString(36)}-${k}`,
      text: interaction === 'comment' ? `Great ${topic} — congratulations to the team!` : `Liked a post about ${topic}`,
      posted_at: postedAt,
      likes: interaction === 'comment' ? likes : 0,
      comments: 0,
      interaction_type: interaction,
      author_pronet_url: personUrl(seed, target.author),
    });
  }
  return out;
}

export interface GenerateOptions {
  people: number;
  companies: number;
  seed: number;
  /** Epoch ms that post dates count back from (default {@link REFERENCE_TIME}). */
  referenceTime?: number;
}

/** Companies first (needed to place people), then people, each with its posts. */
export function* generateDataset(opts: GenerateOptions): Generator<
  { kind: 'company'; record: DsCompanyRecord } | { kind: 'person'; record: DsPersonRecord; posts: DsPostRecord[] }
> {
  const picks: CompanyPick[] = [];
  for (let i = 0; i < opts.companies; i++) {
    const record = generateCompany(opts.seed, i);
    picks.push(companyPick(record));
    yield { kind: 'company', record };
  }
  const picker = new CompanyPicker(picks);
  for (let i = 0; i < opts.people; i++) {
    const record = generatePerson(opts.seed, i, picker);
    yield { kind: 'person', record, posts: generatePosts(opts.seed, i, record, opts.people, opts.referenceTime) };
  }
}
