/**
 * Statements built from SQL fragments (Kysely's `sql` tag: the condition compiler's output,
 * composed by the `db/` readers) compile here, once per statement, to PostgreSQL text with
 * numbered parameters; they then run on the caller's pg pool or client as before (`rawPool`
 * types, the same connections). Nothing numbers `$n` by hand.
 */
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql, type Compilable, type Expression, type RawBuilder } from 'kysely';
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
 * reads). `runQuery(db, typedQueries<DB>().selectFrom(…)…)` compiles it on each call and returns its rows;
 * `preparedQuery` compiles a hot statement once.
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

/**
 * A typed statement built and compiled once, for hot paths: `build` receives stand-ins for the
 * parameters (`(p: { postId: string }) => db.selectFrom('posts')…where('id', '=', p.postId)`);
 * each call sends the compiled text with the caller's values (`query(db, { postId })`). Building
 * and compiling a Kysely query costs ~10–100 µs of CPU per call, ~1.5 ms per publish on the worker's
 * publish path. The shape must not depend on a value: a stand-in cannot be tested, computed on or
 * serialised (that throws while compiling); jsonb values come as JSON text.
 */
export function preparedQuery<P extends Record<string, unknown>, Row>(build: (p: P) => Compilable<Row>, name?: string): (db: Queryable, params: P) => Promise<Row[]> {
  let compiled: { text: string; slots: unknown[] } | undefined;
  return async (db, params) => {
    compiled ??= compileWithStandIns(build);
    const config = { text: compiled.text, values: compiled.slots.map((v) => (v instanceof StandIn ? params[v.key] : v)) };
    return (await db.query(name ? { name, ...config } : config)).rows as Row[];
  };
}

/** A parameter's place in a statement compiled by `preparedQuery`. */
class StandIn {
  constructor(readonly key: string) {}
  [Symbol.toPrimitive](): never {
    throw new Error(`preparedQuery: parameter ${this.key} is used as a value while building the statement`);
  }
  toJSON(): never {
    return this[Symbol.toPrimitive]();
  }
}

function compileWithStandIns<P, Row>(build: (p: P) => Compilable<Row>): { text: string; slots: unknown[] } {
  const standIns = new Proxy({}, { get: (_, key) => new StandIn(String(key)) }) as P;
  const compiled = build(standIns).compile();
  return { text: compiled.sql, slots: compiled.parameters as unknown[] };
}

/**
 * The row type of a typed statement as Kysely infers it from the entities: of a query builder
 * (`RowOf<ReturnType<typeof personQuery>>`), of a statement `preparedQuery` made
 * (`RowOf<typeof keyLookup>`) or of a function answering a typed query's rows
 * (`RowOf<typeof postsForSchedule>`). Row types are derived so, never restated: a column changed
 * in its entity changes them.
 */
export type RowOf<Q> = Q extends Compilable<infer Row> ? Row : Q extends (...args: never[]) => Promise<Array<infer Row>> ? Row : never;

/** `ids` as one `uuid[]` parameter of Kysely, for `= any(…)` (one plan whatever the count; `in ()` fails on none). */
export const uuidArray = (ids: readonly string[]): Expression<string[]> => sql<string[]>`${ids}::uuid[]`;

/** `values` as one `text[]` parameter of Kysely, for `= any(…)` / `<> all(…)`. */
export const textArray = (values: readonly string[]): Expression<string[]> => sql<string[]>`${values}::text[]`;

/**
 * DataLoader options of the hot reads batched per event-loop turn (`createContactReader`,
 * `createBalanceReader`): the loads of one turn, run at `setImmediate`, at most 100 a statement,
 * never cached (each read runs after its request arrived).
 */
export const BATCH_PER_TURN = { cache: false, maxBatchSize: 100, batchScheduleFn: (run: () => void) => setImmediate(run) } as const;

/**
 * A text[] literal (`{"a","b"}`) for array parameters: node-postgres would build one by escaping
 * each element apart, which on a 10,000-key look-up is most of its garbage.
 */
const ARRAY_SPECIAL = /[\\"]/;
export function textArrayLiteral(xs: string[]): string {
  if (!xs.length) return '{}';
  if (!xs.some((x) => ARRAY_SPECIAL.test(x))) return `{"${xs.join('","')}"}`;
  return `{${xs.map((x) => `"${x.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;
}
/** `any($n::text[])` of `xs`, passed as one text[] literal (textArrayLiteral). */
export const anyText = (xs: string[]) => sql<string>`any(${textArrayLiteral(xs)}::text[])`;
