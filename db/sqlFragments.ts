/**
 * Statements built from SQL fragments (Kysely's `sql` tag: the condition compiler's output,
 * composed by the `db/` readers) compile here, once per statement, to PostgreSQL text with
 * numbered parameters; they then run on the caller's pg pool or client as before (`rawPool`
 * types, the same connections). Nothing numbers `$n` by hand.
 */
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type Compilable, type RawBuilder } from 'kysely';
import type { Queryable } from './pool.js';

/** Compile-only: no connection of its own (the statements run on the pg pool the caller holds). */
const compiler = new Kysely<never>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

/** A statement's text and values, as pg's `query` takes them (spread in a config to name it). */
export function compileSql(statement: RawBuilder<unknown>): { text: string; values: unknown[] } {
  const compiled = statement.compile(compiler);
  return { text: compiled.sql, values: compiled.parameters as unknown[] };
}

/**
 * The same compile-only Kysely, typed from the entities (`InferKyselyDB<typeof A | typeof B>`):
 * a typed query builder for statements that run on a pg pool or client rather than on an entity
 * manager (the worker's publish path, the ingest pipelines' transactions, the global dataset
 * reads). `runQuery(db, typedQueries<DB>().selectFrom(…)…)` compiles it once and returns its rows.
 */
export function typedQueries<DB>(): Kysely<DB> {
  return compiler as unknown as Kysely<DB>;
}

/** Runs a typed query on a pg pool or client (its transaction, pg's types); `name` makes it a prepared statement. */
export async function runQuery<Row>(db: Queryable, query: Compilable<Row>, name?: string): Promise<Row[]> {
  const compiled = query.compile();
  const config = { text: compiled.sql, values: compiled.parameters as unknown[] };
  return (await db.query(name ? { name, ...config } : config)).rows as Row[];
}
