/**
 * The enrichment waterfall's configuration as deployed: read from `ENRICHMENT_CONFIG` or
 * `config/enrichment.json` (file I/O, hence here and not in domain/), validated by
 * domain/enrichmentConfig.ts.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { DEFAULT_ENRICHMENT_CONFIG, EnrichmentConfigError, parseEnrichmentConfig, type EnrichmentConfig } from '../domain/enrichmentConfig.js';

/**
 * Where the configuration comes from: `ENRICHMENT_CONFIG` holding JSON (starts with `{`) or a
 * file path (relative to `rootDir`), else `<rootDir>/config/enrichment.json`, else the default.
 */
export function readEnrichmentConfigSource(rootDir: string, env: NodeJS.ProcessEnv = process.env): { origin: string; raw: unknown } {
  const v = env.ENRICHMENT_CONFIG?.trim();
  const parse = (text: string, origin: string) => {
    try {
      return { origin, raw: JSON.parse(text) as unknown };
    } catch (e) {
      throw new EnrichmentConfigError([`${origin}: not valid JSON (${(e as Error).message})`]);
    }
  };
  if (v && v.startsWith('{')) return parse(v, 'ENRICHMENT_CONFIG');
  const path = v ? (isAbsolute(v) ? v : resolve(rootDir, v)) : resolve(rootDir, 'config', 'enrichment.json');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if (!v && (e as NodeJS.ErrnoException).code === 'ENOENT') return { origin: 'default', raw: DEFAULT_ENRICHMENT_CONFIG };
    throw new EnrichmentConfigError([`${path}: ${(e as Error).message}`]);
  }
  return parse(text, path);
}

let cached: { key: string; config: EnrichmentConfig } | undefined;

/** Loads and validates the configuration; cached while ENRICHMENT_CONFIG stays the same. */
export function loadEnrichmentConfig(rootDir: string, env: NodeJS.ProcessEnv = process.env): EnrichmentConfig {
  const key = `${rootDir}\0${env.ENRICHMENT_CONFIG ?? ''}`;
  if (cached?.key === key) return cached.config;
  const { raw } = readEnrichmentConfigSource(rootDir, env);
  const config = parseEnrichmentConfig(raw);
  cached = { key, config };
  return config;
}
