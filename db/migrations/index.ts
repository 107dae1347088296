/**
 * Migrations are hand-written SQL (trigram/GIN indexes and constraints the ORM does not model)
 * and listed explicitly so that tsx, the bundler and the compiled output all see the same set.
 * Add new ones at the end; names sort by timestamp.
 */
import { Migration20261121000000_platform } from './Migration20261121000000_platform.js';
import { Migration20261121010000_contacts } from './Migration20261121010000_contacts.js';
import { Migration20261121020000_dataset } from './Migration20261121020000_dataset.js';
import { Migration20261121020100_dataset_search } from './Migration20261121020100_dataset_search.js';
import { Migration20261121030000_social } from './Migration20261121030000_social.js';
import { Migration20261121060000_publishing } from './Migration20261121060000_publishing.js';
import { Migration20261121061000_publishing_dispatch } from './Migration20261121061000_publishing_dispatch.js';
import { Migration20261121062000_publish_attempt_owner } from './Migration20261121062000_publish_attempt_owner.js';
import { Migration20261121070000_staging_text } from './Migration20261121070000_staging_text.js';
import { Migration20261121071000_staging_blocks } from './Migration20261121071000_staging_blocks.js';
import { Migration20261121080000_ingest_no_fk } from './Migration20261121080000_ingest_no_fk.js';
import { Migration20261121081000_identity_log } from './Migration20261121081000_identity_log.js';
import { Migration20261122090000_staging_logged } from './Migration20261122090000_staging_logged.js';
import { Migration20261124110000_auth_change_notify } from './Migration20261124110000_auth_change_notify.js';
import { Migration20261124120000_credit_kind } from './Migration20261124120000_credit_kind.js';
import { Migration20261124130000_api_key_expiry } from './Migration20261124130000_api_key_expiry.js';
import { Migration20261124131000_webhook_secret_encrypted } from './Migration20261124131000_webhook_secret_encrypted.js';
import { Migration20261124140000_discovery_plans } from './Migration20261124140000_discovery_plans.js';
import { Migration20261124150500_discovery_arrays } from './Migration20261124150500_discovery_arrays.js';
import { Migration20261124152500_discovery_partner_keys } from './Migration20261124152500_discovery_partner_keys.js';
import { Migration20261125230000_people_by_skill } from './Migration20261125230000_people_by_skill.js';
import { Migration20261126020000_companies_by_technology } from './Migration20261126020000_companies_by_technology.js';
import { Migration20261126030000_title_headcount } from './Migration20261126030000_title_headcount.js';
import { Migration20261126050000_people_country_id } from './Migration20261126050000_people_country_id.js';
import { Migration20261126100000_idempotency_body_text } from './Migration20261126100000_idempotency_body_text.js';
import { Migration20261126110000_credit_ledger_seq } from './Migration20261126110000_credit_ledger_seq.js';
import { Migration20261126120000_idempotency_expiry_index } from './Migration20261126120000_idempotency_expiry_index.js';
import { Migration20261128100000_row_level_security } from './Migration20261128100000_row_level_security.js';
import { Migration20261128200000_oauth } from './Migration20261128200000_oauth.js';
import { Migration20261128300000_privacy } from './Migration20261128300000_privacy.js';
import { Migration20261128500000_bulk_enrichment } from './Migration20261128500000_bulk_enrichment.js';
import { Migration20261128600000_webhook_events } from './Migration20261128600000_webhook_events.js';
import { Migration20261128610000_post_retry_at } from './Migration20261128610000_post_retry_at.js';
import { Migration20261128630000_audit_trail } from './Migration20261128630000_audit_trail.js';
import { Migration20261128640000_dataset_opt_outs_subject_access } from './Migration20261128640000_dataset_opt_outs_subject_access.js';
import { Migration20261129000000_api_replicas } from './Migration20261129000000_api_replicas.js';
import { Migration20261129100000_workspace_id_default } from './Migration20261129100000_workspace_id_default.js';

export const migrationsList = [
  Migration20261121000000_platform,
  Migration20261121010000_contacts,
  Migration20261121020000_dataset,
  Migration20261121020100_dataset_search,
  Migration20261121030000_social,
  Migration20261121060000_publishing,
  Migration20261121061000_publishing_dispatch,
  Migration20261121062000_publish_attempt_owner,
  Migration20261121070000_staging_text,
  Migration20261121071000_staging_blocks,
  Migration20261121080000_ingest_no_fk,
  Migration20261121081000_identity_log,
  Migration20261122090000_staging_logged,
  Migration20261124110000_auth_change_notify,
  Migration20261124120000_credit_kind,
  Migration20261124130000_api_key_expiry,
  Migration20261124131000_webhook_secret_encrypted,
  Migration20261124140000_discovery_plans,
  Migration20261124150500_discovery_arrays,
  Migration20261124152500_discovery_partner_keys,
  Migration20261125230000_people_by_skill,
  Migration20261126020000_companies_by_technology,
  Migration20261126030000_title_headcount,
  Migration20261126050000_people_country_id,
  Migration20261126100000_idempotency_body_text,
  Migration20261126110000_credit_ledger_seq,
  Migration20261126120000_idempotency_expiry_index,
  Migration20261128100000_row_level_security,
  Migration20261128200000_oauth,
  Migration20261128300000_privacy,
  Migration20261128500000_bulk_enrichment,
  Migration20261128600000_webhook_events,
  Migration20261128610000_post_retry_at,
  Migration20261128630000_audit_trail,
  Migration20261128640000_dataset_opt_outs_subject_access,
  Migration20261129000000_api_replicas,
  Migration20261129100000_workspace_id_default,
];
