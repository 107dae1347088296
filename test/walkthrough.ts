/**
 * Reads the README walkthrough (between `<!-- walkthrough:start` and `<!-- walkthrough:end -->`):
 * each `sh` block is a command, the `json` block after it the answer the reader should see.
 *
 * Answers are abbreviated JSON, matched as patterns:
 * - `…` left bare stands for anything: as a value any value, as an object member "and other
 *   members", as the last array element "and more elements". Objects always match with extra
 *   members; an array without a trailing `…` must have exactly the elements shown.
 * - In a string, `…` matches any text (`"…Engineer…"`), and `$NAME` a value to keep (letters,
 *   digits, `-`, `_`). A name the command uses (`$JOB_ID` in `curl "$API/jobs/$JOB_ID"`) must
 *   equal its kept value; any other name is (re)captured, equal wherever it repeats in the answer.
 * - A command with a `# repeat until` comment is run again until its answer matches.
 */

export interface WalkthroughStep {
  command: string;
  answer: string;
  /** 1-based README line of the command block, for failure messages. */
  line: number;
  repeat: boolean;
}

const FENCE = /^```(\w*)[^\n]*\n([\s\S]*?)^```\s*$/gm;

export function readWalkthrough(readme: string): WalkthroughStep[] {
  const start = readme.indexOf('<!-- walkthrough:start');
  const end = readme.indexOf('<!-- walkthrough:end -->');
  if (start < 0 || end < start) throw new Error('README has no walkthrough:start … walkthrough:end section');
  const section = readme.slice(start, end);
  const lineOffset = readme.slice(0, start).split('\n').length - 1;
  const blocks = [...section.matchAll(FENCE)].map((m) => ({ lang: m[1]!, body: m[2]!, line: lineOffset + section.slice(0, m.index).split('\n').length }));
  const steps: WalkthroughStep[] = [];
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i]!;
    if (b.lang !== 'sh') throw new Error(`README line ${b.line}: a ${b.lang || 'plain'} block where a sh command was expected`);
    const answer = blocks[i + 1];
    if (answer?.lang !== 'json') throw new Error(`README line ${b.line}: the command has no json answer block after it`);
    steps.push({ command: b.body.trim(), answer: answer.body.trim(), line: b.line, repeat: /#\s*repeat until/.test(b.body) });
    i++;
  }
  return steps;
}

/** The pattern for "anything"; `…` bare in the README. */
const ANY = '\u0000…';

/** Turns the abbreviated JSON into JSON: bare `…` becomes the ANY marker (a member `"ANY": ANY` in an object). */
export function parseAnswer(text: string): unknown {
  let out = '';
  const stack: string[] = [];
  let inString = false;
  let lastSignificant = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') stack.push(c);
    else if (c === '}' || c === ']') stack.pop();
    if (c === '…') {
      const marker = JSON.stringify(ANY);
      const member = stack.at(-1) === '{' && (lastSignificant === '{' || lastSignificant === ',');
      out += member ? `${marker}:${marker}` : marker;
      lastSignificant = '"';
      continue;
    }
    out += c;
    if (!/\s/.test(c)) lastSignificant = c;
  }
  return JSON.parse(out);
}

/** The `$NAME`s a command uses. */
export function namesUsed(command: string): Set<string> {
  return new Set([...command.matchAll(/\$\{?([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!));
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Matches `actual` against the pattern. Returns the values captured (names not in `fixed`), or
 * throws naming the JSON pointer of the first difference.
 */
export function matchAnswer(pattern: unknown, actual: unknown, fixed: Record<string, string>): Record<string, string> {
  const captured: Record<string, string> = {};
  const fail = (path: string, why: string): never => {
    throw new Error(`at ${path || '/'}: ${why}`);
  };
  const walk = (p: unknown, a: unknown, path: string): void => {
    if (p === ANY) return;
    if (typeof p === 'string') {
      if (typeof a !== 'string') fail(path, `expected a string like ${JSON.stringify(p)}, got ${JSON.stringify(a)}`);
      const names: string[] = [];
      const source = p
        .split(/(…|\$[A-Z][A-Z0-9_]*)/)
        .map((part) => {
          if (part === '…') return '.*?';
          if (/^\$[A-Z][A-Z0-9_]*$/.test(part)) {
            const name = part.slice(1);
            const known = fixed[name] ?? captured[name];
            if (known !== undefined) return escapeRegExp(known);
            names.push(name);
            return '([A-Za-z0-9_-]+)';
          }
          return escapeRegExp(part);
        })
        .join('');
      const m = new RegExp(`^${source}$`, 's').exec(a as string);
      if (!m) fail(path, `expected ${JSON.stringify(p)}, got ${JSON.stringify(a)}`);
      names.forEach((name, k) => {
        const value = m![k + 1]!;
        if (captured[name] !== undefined && captured[name] !== value) fail(path, `$${name} is ${value} here but ${captured[name]} before`);
        captured[name] = value;
      });
      return;
    }
    if (Array.isArray(p)) {
      if (!Array.isArray(a)) return fail(path, `expected an array, got ${JSON.stringify(a)}`);
      const open = p.at(-1) === ANY;
      const shown = open ? p.slice(0, -1) : p;
      if (open ? a.length < shown.length : a.length !== shown.length) {
        fail(path, `expected ${open ? 'at least ' : ''}${shown.length} elements, got ${a.length}`);
      }
      shown.forEach((item, i) => walk(item, a[i], `${path}/${i}`));
      return;
    }
    if (p !== null && typeof p === 'object') {
      if (a === null || typeof a !== 'object' || Array.isArray(a)) fail(path, `expected an object, got ${JSON.stringify(a)}`);
      for (const [k, v] of Object.entries(p)) {
        if (k === ANY) continue;
        if (!(k in (a as object))) fail(path, `member ${k} is missing`);
        walk(v, (a as Record<string, unknown>)[k], `${path}/${k}`);
      }
      return;
    }
    if (p !== a) fail(path, `expected ${JSON.stringify(p)}, got ${JSON.stringify(a)}`);
  };
  walk(pattern, actual, '');
  return captured;
}
