#!/bin/sh
# The compose `temporal-schema` job (temporalio/admin-tools): creates Temporal's two databases on
# the shared PostgreSQL if missing, then sets up and upgrades their schema to the versions this
# admin-tools image ships. Safe to run on every `docker compose up`: each step is idempotent.
set -eu
sql() { temporal-sql-tool --plugin postgres12 --ep "$SQL_HOST" -p "$SQL_PORT" -u "$SQL_USER" --pw "$SQL_PASSWORD" "$@"; }
for db in temporal:temporal temporal_visibility:visibility; do
  name=${db%%:*}
  schema=${db##*:}
  # `create` fails when the database exists already; that is the only failure ignored here.
  sql --db "$name" create 2>/dev/null || echo "database $name exists"
  sql --db "$name" setup-schema -v 0.0
  sql --db "$name" update-schema -d "/etc/temporal/schema/postgresql/v12/$schema/versioned"
done
echo "temporal schema ready"
