/**
 * Statements built from SQL fragments (Kysely's `sql` tag: the condition compiler's output,
 * composed by the `db/` readers) compile here, once per statement, to PostgreSQL text with
 * numbered parameters; they then run on the caller's pg pool or client as before (`rawPool`
 * types, the same connections). Nothing numbers `$n` by hand.
 */
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type RawBuilder } from 'kysely';

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
