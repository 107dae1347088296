/**
 * Dashboards and alerts (deploy/monitoring): the rules and the Grafana dashboard query only
 * metrics the processes export (telemetry/metrics.ts, the Temporal SDK's temporal_*,
 * prom-client's process/nodejs defaults); `promtool check rules alerts.yml` and `promtool test
 * rules alerts.test.yml` pass (promtool comes from the bootstrap: Debian's prebuilt package, pinned).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ROOT_DIR } from '../../domain/config.js';

const DIR = join(ROOT_DIR, 'deploy', 'monitoring');
const exported = readFileSync(join(ROOT_DIR, 'telemetry', 'metrics.ts'), 'utf8');

/** Metric names a PromQL expression uses (identifiers followed by `{`, `[` or `)` that are not functions or labels). */
function metricsOf(expr: string): string[] {
  // label values ("…") are not names
  return [...expr.replace(/"[^"]*"/g, '""').matchAll(/\b([a-z_][a-z0-9_]*)\s*(?=\{|\[)/g)].map((m) => m[1]!).filter((n) => !['by', 'without', 'on', 'ignoring'].includes(n));
}

function isExported(metric: string): boolean {
  if (metric.startsWith('temporal_') || metric.startsWith('process_') || metric.startsWith('nodejs_')) return true;
  const base = metric.replace(/_(bucket|count|sum)$/, '');
  return exported.includes(`name: '${base}'`);
}

const PROMTOOL = join(ROOT_DIR, '.tools', 'bin', 'promtool');

describe('monitoring', () => {
  it('promtool: the rules load, and each alert fires on the series that should fire it, and not before', () => {
    const run = (args: string[]) => execFileSync(PROMTOOL, args, { cwd: DIR, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(run(['check', 'rules', 'alerts.yml'])).toContain('SUCCESS: 6 rules found');
    expect(run(['test', 'rules', 'alerts.test.yml'])).toContain('SUCCESS');
  });

  it('alerts cover error rate, latency, Temporal backlog, webhook failures, credit debit failures and pool exhaustion, on exported metrics', () => {
    const rules = (parse(readFileSync(join(DIR, 'alerts.yml'), 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] }).groups.flatMap((g) => g.rules);
    expect(rules.map((r) => r.alert).sort()).toEqual(['ApiHighErrorRate', 'ApiHighLatency', 'CreditDebitFailures', 'DatabasePoolExhausted', 'TemporalTaskBacklog', 'WebhookDeliveriesFailing']);
    for (const r of rules) for (const m of metricsOf(r.expr)) expect(isExported(m), `${r.alert}: ${m}`).toBe(true);
  });

  it('the Grafana dashboard is valid JSON whose panels query exported metrics', () => {
    const dash = JSON.parse(readFileSync(join(DIR, 'grafana-dashboard.json'), 'utf8')) as { uid: string; panels: { title: string; targets: { expr: string }[] }[] };
    expect(dash.uid).toBe('contact-data-api');
    expect(dash.panels.length).toBeGreaterThanOrEqual(10);
    for (const p of dash.panels) {
      expect(p.targets.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets) for (const m of metricsOf(t.expr)) expect(isExported(m), `${p.title}: ${m}`).toBe(true);
    }
  });
});
