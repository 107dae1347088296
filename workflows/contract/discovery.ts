/** The verified-companies import job (workflows/importVerifiedCompanies.ts). */
export interface ImportVerifiedCompaniesInput {
  companyIds: string[];
  segmentId: string | null;
  contactsPerCompany: number;
  /** Workspace and user keys pay for each person imported; session keys do not (absent: not charged). */
  billable?: boolean;
}
