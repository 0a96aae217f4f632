/**
 * Quoted upstream text names no host of the upstream's network (G273): a host behind a proxy keeps
 * no port, IP addresses and `<host>:<port>` go, the request's own wording stays.
 */
import { describe, expect, it } from 'vitest';
import { scrubberFor, withoutHosts } from '../../src/providers/toolkit/errors.js';

const scrub = scrubberFor('mg_key_0123456789', [new URL('http://127.0.0.1:4000'), new URL('https://relay-proxy.example:8443/api')]);

describe("scrubbing the hosts of an upstream's network", () => {
  it('a host behind the proxy (same address, another port) keeps no port', () => {
    const said = scrub('upload s3://bucket/results/x: connect ECONNREFUSED 127.0.0.1:9000');
    expect(said).not.toMatch(/9000|127\.0\.0\.1/);
    expect(said).toContain('[upstream]');
    expect(scrub('relay-proxy.example:9443 refused')).toBe('[upstream] refused');
  });

  it('IP addresses (v4, bracketed v6, with or without a port) and internal host:port names go', () => {
    const said = withoutHosts('could not reach minio:9000, db.internal:5432, 10.1.2.3, 10.1.2.4:80 or [fd00::1]:8080');
    expect(said).toBe('could not reach [host], [host], [address], [address] or [address]');
  });

  it("the request's own wording stays", () => {
    for (const text of [
      'size: 1024x1024 is not allowed',
      'ratio 16:9 with duration: 8',
      'image_urls[0]: could not fetch (HTTP 404)',
      'at 12:30 the prompt was refused',
    ]) {
      expect(withoutHosts(text)).toBe(text);
    }
  });
});
