import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.js';
import { loadConfig } from './config.js';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 8790, host: '0.0.0.0', dataDir: path.resolve('./data'), publicUrl: 'http://localhost:8790', powerPrefix: '', apiPrefix: '',
      sandboxTiming: 'fast', allowPrivateUrls: false, workers: true, maxAttempts: 3, leaseMs: 30_000, videosResultTtlHours: 24,
    });
    expect(c.bootstrapKey).toBeUndefined();
  });

  it('reads every setting', () => {
    const c = loadConfig({
      PORT: '9000', MEDIAGATE_DATA_DIR: '/tmp/x', MEDIAGATE_PUBLIC_URL: 'https://m.example.com/', MEDIAGATE_POWER_PREFIX: '/power',
      MEDIAGATE_API_PREFIX: '/api', MEDIAGATE_BOOTSTRAP_KEY: 'k'.repeat(20), MEDIAGATE_SANDBOX_TIMING: 'realistic',
      MEDIAGATE_ALLOW_PRIVATE_URLS: '1', MEDIAGATE_MODEL_ROUTES: 'pic-2=sandbox,*=sandbox',
    });
    expect(c).toMatchObject({ port: 9000, dataDir: '/tmp/x', publicUrl: 'https://m.example.com', powerPrefix: '/power', apiPrefix: '/api',
      sandboxTiming: 'realistic', allowPrivateUrls: true, modelRoutes: { 'pic-2': 'sandbox', '*': 'sandbox' } });
  });

  it.each([
    ['PORT', 'abc'], ['PORT', '70000'], ['MEDIAGATE_PUBLIC_URL', 'not a url'], ['MEDIAGATE_PUBLIC_URL', 'ftp://x'],
    ['MEDIAGATE_POWER_PREFIX', 'power'], ['MEDIAGATE_API_PREFIX', '/api/'], ['MEDIAGATE_SANDBOX_TIMING', 'slow'],
    ['MEDIAGATE_ALLOW_PRIVATE_URLS', 'maybe'], ['MEDIAGATE_BOOTSTRAP_KEY', 'short'], ['MEDIAGATE_MODEL_ROUTES', 'pic-2'],
    ['MEDIAGATE_LOG_LEVEL', 'loud'], ['MEDIAGATE_SIGNING_SECRET', 'too-short'], ['MEDIAGATE_LEASE_SECONDS', '1'],
  ])('a bad %s (%s) stops the start with a message naming it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name}: `));
  });
});
