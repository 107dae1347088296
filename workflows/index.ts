/** Every workflow type the worker registers (the bundle entry point). One file per workflow. */
export * from './bulkUpsert.js';
export * from './enrichment.js';
export * from './importVerifiedCompanies.js';
export * from './sourcePull.js';
export * from './publishPost.js';
export * from './externalReply.js';
export * from './repostChain.js';
export * from './scheduleBatch.js';
export * from './mediaImport.js';
export * from './mediaAssembly.js';
export * from './mediaRetention.js';
export * from './bulkEnrichment.js';
export * from './erasure.js';
export * from './retention.js';
export * from './subjectAccess.js';
