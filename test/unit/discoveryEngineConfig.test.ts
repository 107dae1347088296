/**
 * OPENSEARCH_URL names one node or a cluster's nodes (docs/DISCOVERY.md "Losing a node"): the
 * client gets every node, so a search that cannot reach one is sent to another.
 */
import { describe, expect, it } from 'vitest';
import { discoveryConfig } from '../../domain/config.js';

describe('discovery engine configuration', () => {
  it('takes one URL or several separated by commas, without trailing slashes', () => {
    expect(discoveryConfig({ OPENSEARCH_URL: 'https://search.example.com:9200/' }).opensearchUrl).toBe('https://search.example.com:9200');
    expect(discoveryConfig({ OPENSEARCH_URL: 'http://10.0.0.1:9200/, http://10.0.0.2:9200' }).opensearchUrl).toBe('http://10.0.0.1:9200,http://10.0.0.2:9200');
    expect(discoveryConfig({ OPENSEARCH_PORT: '9333' }).opensearchUrl).toBe('http://127.0.0.1:9333');
  });

  it('refuses a list entry that is not an http(s) URL, naming it', () => {
    expect(() => discoveryConfig({ OPENSEARCH_URL: 'http://10.0.0.1:9200,10.0.0.2:9200' })).toThrow(/OPENSEARCH_URL must be http\(s\) URLs.*10\.0\.0\.2:9200/);
  });

  it('refuses a shard or replica count that is not a whole number (≥ 1 shard)', () => {
    expect(() => discoveryConfig({ OPENSEARCH_SHARDS: '0' })).toThrow(/OPENSEARCH_SHARDS must be a whole number ≥ 1/);
    expect(() => discoveryConfig({ OPENSEARCH_REPLICAS: 'one' })).toThrow(/OPENSEARCH_REPLICAS must be a whole number ≥ 0/);
    expect(() => discoveryConfig({ OPENSEARCH_SHARDS: '2', OPENSEARCH_REPLICAS: '0' })).not.toThrow();
  });
});
