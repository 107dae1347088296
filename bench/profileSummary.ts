/**
 * Where a process's CPU went, from a V8 `.cpuprofile` (`bench/api-hotpath.ts --cpu-prof DIR`, or
 * any `node --cpu-prof`): self time by package and by function, and inclusive time of the
 * project's own functions, as shares of the busy (non-idle) time from the first request on
 * (start-up is left out). With `--us-per-request` (the bench's server CPU µs per request) each
 * share is also shown as µs per request.
 *
 *   npx tsx bench/profileSummary.ts /tmp/prof/CPU.*.cpuprofile [--us-per-request 440] [--top 40]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const { values: args, positionals } = parseArgs({ allowPositionals: true, options: { 'us-per-request': { type: 'string' }, top: { type: 'string', default: '40' } } });
const usPerRequest = Number(args['us-per-request'] ?? 0);
const top = Number(args.top);

for (const file of positionals) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = (n: ProfileNode) => {
    const { functionName, url, lineNumber } = n.callFrame;
    return `${functionName || '(anonymous)'} ${url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(dist\/)/, '$1')}:${lineNumber + 1}`;
  };
  const packageOf = (n: ProfileNode) => {
    const url = n.callFrame.url;
    if (!url) return `(native) ${n.callFrame.functionName}`;
    const dep = /.*node_modules\/((@[^/]+\/)?[^/]+)/.exec(url);
    if (dep) return dep[1]!;
    if (url.startsWith('node:')) return url.split('/')[0]!;
    return /\/(dist\/.*|[^/]+)$/.exec(url)?.[1] ?? url;
  };
  // Samples before the first one inside a request (start-up: module loading, connecting) are left out.
  const inRequest = new Map<number, boolean>();
  const isInRequest = (id: number): boolean => {
    let v = inRequest.get(id);
    if (v === undefined) {
      const up = parent.get(id);
      v = byId.get(id)!.callFrame.functionName === 'handleRequest' || (up !== undefined && isInRequest(up));
      inRequest.set(id, v);
    }
    return v;
  };
  const selfUs = new Map<number, number>();
  let started = false;
  profile.samples.forEach((id, i) => {
    if (!started && !(started = isInRequest(id))) return;
    if (byId.get(id)!.callFrame.functionName === '(idle)') return;
    selfUs.set(id, (selfUs.get(id) ?? 0) + profile.timeDeltas[i]!);
  });
  const busy = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  const selfByFunction = new Map<string, number>();
  const selfByPackage = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const n = byId.get(id)!;
    add(selfByFunction, name(n), us);
    add(selfByPackage, packageOf(n), us);
    const seen = new Set<string>();
    for (let c: number | undefined = id; c !== undefined; c = parent.get(c)) {
      const k = name(byId.get(c)!);
      if (!k.includes(' dist/') || seen.has(k)) continue;
      seen.add(k);
      add(inclusive, k, us);
    }
  }
  const table = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => `${((100 * us) / busy).toFixed(1).padStart(5)}%${usPerRequest ? ` ${((usPerRequest * us) / busy).toFixed(0).padStart(4)} µs` : ''}  ${k}`)
      .join('\n');
  console.log(`${file}: ${(busy / 1000).toFixed(0)} ms busy from the first request on`);
  console.log(`\nself time by package\n${table(selfByPackage)}`);
  console.log(`\nself time by function\n${table(selfByFunction)}`);
  console.log(`\ninclusive time of the project's functions (dist/)\n${table(inclusive)}`);
}
