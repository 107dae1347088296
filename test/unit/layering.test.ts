/**
 * The layering and data-layer rules of docs/ARCHITECTURE.md, read from the source with the
 * TypeScript parser: imports flow one way, no SQL outside `db/`, and every statement `db/` still
 * sends as SQL text (a pg `query` or a `COPY` stream rather than the entity manager or a typed
 * Kysely query) says why beside it (`raw SQL: <reason>`), so a new one cannot slip in unexplained;
 * and no `db/` type restates an entity's columns (row types are derived from the entities).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');

function sourceFiles(dir: string): ts.SourceFile[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.startsWith('migrations'))
    .map((f) => ts.createSourceFile(join(dir, f), readFileSync(join(root, dir, f), 'utf8'), ts.ScriptTarget.Latest, true));
}

function walk(node: ts.Node, visit: (n: ts.Node) => void): void {
  visit(node);
  node.forEachChild((child) => walk(child, visit));
}

/** Value imports (not `import type`) of a file, as written. */
function valueImports(file: ts.SourceFile): string[] {
  return file.statements
    .filter((s): s is ts.ImportDeclaration => ts.isImportDeclaration(s) && !s.importClause?.isTypeOnly)
    .filter((s) => !s.importClause?.namedBindings || !ts.isNamedImports(s.importClause.namedBindings) || s.importClause.namedBindings.elements.some((e) => !e.isTypeOnly) || !!s.importClause.name)
    .map((s) => (s.moduleSpecifier as ts.StringLiteral).text);
}

function allImports(file: ts.SourceFile): string[] {
  return file.statements.filter(ts.isImportDeclaration).map((s) => (s.moduleSpecifier as ts.StringLiteral).text);
}

/** How far above a raw statement its `raw SQL:` reason may sit. */
const REASON_LINES = 20;

const where = (file: ts.SourceFile, node: ts.Node) => `${file.fileName}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;

/** A string that reads as a SQL statement (what a query would send), not prose that mentions a verb. */
const SQL_TEXT = /^\s*(select\s[\s\S]*\sfrom\s|insert\s+into\s|update\s+\w+\s+set\s|delete\s+from\s|with\s+\w+\s+as\s*\(|copy\s+\w+(\s*\([^)]*\))?\s+(from|to)\s|begin\b|commit\b)/i;

/**
 * A piece of SQL rather than a whole statement (stricter, for domain/ and the routes, which
 * hold none): a sub-select, a join clause, a cast, a jsonb member, a CASE over a column, a
 * `<alias>.<column>` reference (`c.id`, `co.company_name`), or a template ending in `<alias>.`.
 * Checked on string literals and on every literal part of a template.
 */
const SQL_FRAGMENT = [
  /\bselect\b[\s\S]*\bfrom\b/i,
  /\bjoin\s+\w+(\s+\w+)?\s+on\b/i,
  /::\s*(text|numeric|int|integer|bigint|smallint|uuid|timestamptz|boolean|jsonb)\b/i,
  /->>?\s*'/,
  /\bcase\s+[\w.]+\s+when\b/i,
  /(^|[\s(,])[a-z]{1,2}\.[a-z]+_[a-z_]+\b/,
  /^\s*\(?[a-z]{1,2}\.(id|[a-z]{3,}|[a-z]+_[a-z_]+)\)?\s*$/,
];
/** A template part followed by a substitution that ends in `<alias>.` builds a column reference. */
const ALIAS_PREFIX = /(^|[\s(,])[a-z]{1,2}\.$/;
const sqlFragmentsIn = (f: ts.SourceFile): string[] => {
  const found: string[] = [];
  walk(f, (n) => {
    const texts =
      ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)
        ? [n.text]
        : ts.isTemplateExpression(n)
          ? [n.head.text, ...n.templateSpans.map((s) => s.literal.text)]
          : [];
    const beforeSubstitution = ts.isTemplateExpression(n) ? [n.head.text, ...n.templateSpans.slice(0, -1).map((s) => s.literal.text)] : [];
    if (texts.some((t) => SQL_FRAGMENT.some((re) => re.test(t))) || beforeSubstitution.some((t) => ALIAS_PREFIX.test(t))) found.push(`${where(f, n)} ${texts.join('…').slice(0, 40)}`);
  });
  return found;
};

/** The production tree, every module with the modules it imports values from (relative imports, resolved). */
const PRODUCTION_DIRS = ['api', 'db', 'domain', 'activities', 'workflows', 'worker', 'infra', 'telemetry', 'scripts'];
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const dir of PRODUCTION_DIRS) {
    for (const f of readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' }).filter((n) => n.endsWith('.ts'))) {
      const file = join(dir, f);
      const source = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest, true);
      const reExports = source.statements
        .filter((s): s is ts.ExportDeclaration => ts.isExportDeclaration(s) && !s.isTypeOnly && !!s.moduleSpecifier)
        .map((s) => (s.moduleSpecifier as ts.StringLiteral).text);
      graph.set(
        file,
        [...valueImports(source), ...reExports].filter((m) => m.startsWith('.')).map((m) => relative(root, resolve(root, dirname(file), m.replace(/\.js$/, '.ts')))),
      );
    }
  }
  return graph;
}

/** Strongly connected groups of more than one module (Tarjan): each is an import cycle. */
function importCycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1) cycles.push(group.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

describe('layering', () => {
  it('no import cycle anywhere in the production tree (value imports and re-exports)', () => {
    expect(importCycles(importGraph())).toEqual([]);
    // The check itself finds one: a → b → a.
    expect(importCycles(new Map([['a', ['b']], ['b', ['a']], ['c', ['a']]]))).toEqual([['a', 'b']]);
  });

  it('no route imports a pg pool: not pg itself, nor what opens a pool or a transaction on one', () => {
    const opensHandles = /^(rawPool|openDatabase|openOrm|withTransaction|inTransaction)$/;
    const offenders: string[] = [];
    for (const f of sourceFiles('api/routes'))
      for (const s of f.statements) {
        if (!ts.isImportDeclaration(s) || s.importClause?.isTypeOnly) continue;
        const m = (s.moduleSpecifier as ts.StringLiteral).text;
        if (/^(pg|pg-pool|pg-copy-streams)$/.test(m)) offenders.push(`${f.fileName} → ${m}`);
        const named = s.importClause?.namedBindings;
        if (/\/db\/(pool|orm)\.js$/.test(m) && named && ts.isNamedImports(named))
          for (const e of named.elements) if (!e.isTypeOnly && opensHandles.test(e.name.text)) offenders.push(`${f.fileName} → ${e.name.text} from ${m}`);
      }
    expect(offenders).toEqual([]);
  });

  it('converted route groups use the request\'s scope, never a raw pool (no deps.pool, no Pool/PoolClient/Queryable)', () => {
    // Groups not yet converted to `scope` (issue 28 item 2): remove a file here when it is.
    const unconverted = new Set(
      ['audit', 'integrations', 'platform', 'posts', 'privacy', 'publishing', 'segments'].map((n) =>
        join('api', 'routes', `${n}.ts`),
      ),
    );
    const offenders: string[] = [];
    for (const f of sourceFiles('api/routes')) {
      if (unconverted.has(f.fileName)) continue;
      if (/\bdeps\.pool\b/.test(f.text)) offenders.push(`${f.fileName} uses deps.pool`);
      for (const s of f.statements) {
        if (!ts.isImportDeclaration(s)) continue;
        const m = (s.moduleSpecifier as ts.StringLiteral).text;
        const named = s.importClause?.namedBindings;
        if (/\/db\/pool\.js$/.test(m) && named && ts.isNamedImports(named))
          for (const e of named.elements) if (/^(Pool|PoolClient|Queryable)$/.test(e.name.text)) offenders.push(`${f.fileName} → ${e.name.text} from ${m}`);
      }
    }
    expect(offenders).toEqual([]);
    // Every file named is still there (a renamed one would silently escape the check).
    for (const f of unconverted) expect(sourceFiles('api/routes').some((s) => s.fileName === f)).toBe(true);
  });

  it('db/ imports nothing from api/ or activities/; api/ nothing from activities/', () => {
    const offenders: string[] = [];
    for (const f of sourceFiles('db')) for (const m of allImports(f)) if (/\.\.\/(api|activities)\//.test(m)) offenders.push(`${f.fileName} → ${m}`);
    for (const f of sourceFiles('api')) for (const m of allImports(f)) if (/\.\.\/(\.\.\/)?activities\//.test(m)) offenders.push(`${f.fileName} → ${m}`);
    expect(offenders).toEqual([]);
  });

  it('workflows/ import values only from the workflow SDK, other workflows and domain/ (types from anywhere)', () => {
    // Temporal's OpenTelemetry workflow interceptors are written for the workflow sandbox.
    const sandboxSafe = (m: string) => m === '@temporalio/workflow' || m.startsWith('@temporalio/interceptors-opentelemetry/lib/workflow/') || m === '@temporalio/interceptors-opentelemetry/lib/instrumentation.js';
    const offenders: string[] = [];
    for (const f of sourceFiles('workflows'))
      for (const m of valueImports(f)) if (!(sandboxSafe(m) || m.startsWith('./') || m.startsWith('../domain/'))) offenders.push(`${f.fileName} → ${m}`);
    expect(offenders).toEqual([]);
  });

  it('api/, activities/, db/, worker/ and infra/ import values from workflows/ only through the contract (workflows/contract/; types from anywhere)', () => {
    const offenders: string[] = [];
    for (const dir of ['api', 'activities', 'db', 'worker', 'infra'])
      for (const f of sourceFiles(dir)) for (const m of valueImports(f)) if (/(^|\/)workflows\//.test(m) && !/(^|\/)workflows\/contract\//.test(m)) offenders.push(`${f.fileName} → ${m}`);
    expect(offenders).toEqual([]);
  });

  it('the workflow contract imports values only from the workflow SDK and itself (types only from domain/ and db/)', () => {
    const offenders: string[] = [];
    for (const f of sourceFiles('workflows/contract')) {
      for (const m of valueImports(f)) if (!(m === '@temporalio/workflow' || m.startsWith('./'))) offenders.push(`${f.fileName} → ${m}`);
      for (const m of allImports(f)) if (!(m === '@temporalio/workflow' || m.startsWith('./') || /^\.\.\/\.\.\/(domain|db)\//.test(m))) offenders.push(`${f.fileName} → ${m}`);
    }
    expect(offenders).toEqual([]);
  });

  it('domain/ is pure: it builds no SQL (no kysely or pg import, no sql`…`, no statement text)', () => {
    const offenders: string[] = [];
    for (const f of sourceFiles('domain')) {
      for (const m of allImports(f)) if (/^(kysely|pg|pg-copy-streams|@mikro-orm\/)/.test(m)) offenders.push(`${f.fileName} → ${m}`);
      walk(f, (n) => {
        if (ts.isTaggedTemplateExpression(n) && n.tag.getText() === 'sql') offenders.push(`${where(f, n)} sql\`…\``);
        if ((ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateHead(n)) && SQL_TEXT.test(n.text)) offenders.push(`${where(f, n)} ${n.text.slice(0, 40)}`);
      });
    }
    expect(offenders).toEqual([]);
  });

  it('domain/ does no file I/O (no node:fs or node:path): configuration files are read outside it', () => {
    // domain/config.ts is the one exception still: it loads the process configuration and the
    // installation secrets file (DATA_DIR/secrets.json). Nothing else may join it.
    const ALLOWED = new Set(['config.ts']);
    const offenders: string[] = [];
    for (const f of sourceFiles('domain'))
      for (const m of allImports(f)) if (/^(node:)?(fs|path)(\/|$)/.test(m) && !ALLOWED.has(f.fileName.split('/').pop()!)) offenders.push(`${f.fileName} → ${m}`);
    expect(offenders).toEqual([]);
  });

  it('domain/ holds no SQL fragment either (columns, joins, casts, sub-selects are db/ code)', () => {
    expect(sourceFiles('domain').flatMap(sqlFragmentsIn)).toEqual([]);
    // The check itself finds them: a column, a cast, a sub-select, a join, an alias prefix (not a field path).
    const probe = ts.createSourceFile(
      'probe.ts',
      "const a = 'c.first_name'; const b = `${x}::numeric`; const c = '(select 1 from t)'; const d = 'left join companies co on co.id = c.x'; const e = `co.${y}`; const ok = 'contact.firstName';",
      ts.ScriptTarget.Latest,
      true,
    );
    expect(sqlFragmentsIn(probe).length).toBe(5);
  });

  it('routes pass no SQL to db/ (no column alias such as c.id)', () => {
    expect(sourceFiles('api').flatMap(sqlFragmentsIn)).toEqual([]);
  });

  it('api/, activities/, worker/ and infra/ hold no SQL and run no query', () => {
    const offenders: string[] = [];
    for (const f of [...sourceFiles('api'), ...sourceFiles('activities'), ...sourceFiles('worker'), ...sourceFiles('infra')])
      walk(f, (n) => {
        if ((ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateHead(n)) && SQL_TEXT.test(n.text)) offenders.push(`${where(f, n)} ${n.text.slice(0, 40)}`);
        if (ts.isTaggedTemplateExpression(n) && n.tag.getText() === 'sql') offenders.push(`${where(f, n)} sql\`…\``);
        if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && ['query', 'execute'].includes(n.expression.name.text) && /\b(pool|client|db|connection)\b/i.test(n.expression.expression.getText()))
          offenders.push(`${where(f, n)} ${n.expression.getText()}(…)`);
      });
    expect(offenders).toEqual([]);
  });

  it('every statement db/ sends as SQL text says why beside it (raw SQL: <reason>)', () => {
    const unexplained: string[] = [];
    let statements = 0;
    for (const f of sourceFiles('db')) {
      const text = f.getFullText();
      walk(f, (n) => {
        if (!ts.isCallExpression(n)) return;
        const callee = n.expression;
        if (!ts.isPropertyAccessExpression(callee)) return;
        const first = n.arguments[0];
        // pg's `query` (text, a config or a COPY stream), or the ORM connection's `execute` of SQL text; not Kysely's `execute()`
        const sends = callee.name.text === 'query' || (callee.name.text === 'execute' && !!first && (ts.isStringLiteral(first) || ts.isTemplateLiteral(first)));
        if (!sends || f.fileName === join('db', 'sqlFragments.ts')) return; // runQuery: the runner of typed Kysely queries
        statements += 1;
        // The reason sits beside the statement: in the enclosing top-level declaration (its doc
        // comment or a comment above the call), at most REASON_LINES lines above the call, so one
        // comment cannot cover every statement of a long function.
        let top: ts.Node = n;
        while (top.parent && !ts.isSourceFile(top.parent)) top = top.parent;
        const line = f.getLineAndCharacterOfPosition(n.getStart()).line;
        const from = Math.max(top.getFullStart(), f.getPositionOfLineAndCharacter(Math.max(0, line - REASON_LINES), 0));
        if (!/raw SQL:/i.test(text.slice(from, n.getStart()))) unexplained.push(where(f, n));
      });
    }
    expect(statements).toBeGreaterThan(0);
    expect(unexplained).toEqual([]);
  });

  it('db/ row types come from the entities: no interface or object type restates columns (two or more snake_case names)', () => {
    // Derive them instead: `RowOf<typeof statement>` (db/sqlFragments.ts) or `Selectable<DB['table']>`.
    // A type argument is not a row type of its own (a `sql<…>` relation of parameters, `$narrowType<…>`).
    const restated: string[] = [];
    for (const f of sourceFiles('db'))
      walk(f, (n) => {
        if (!(ts.isInterfaceDeclaration(n) || ts.isTypeLiteralNode(n)) || ((ts.isCallExpression(n.parent) || ts.isTaggedTemplateExpression(n.parent)) && n.parent.typeArguments?.includes(n as ts.TypeNode))) return;
        const columns = n.members.flatMap((m) => (m.name && (ts.isIdentifier(m.name) || ts.isStringLiteral(m.name)) && /^[a-z]+(_[a-z0-9]+)+$/.test(m.name.text) ? [m.name.text] : []));
        if (columns.length >= 2) restated.push(`${where(f, n)} ${columns.join(', ')}`);
      });
    expect(restated).toEqual([]);
  });
});
