import { describe, expect, it } from 'vitest';
import { urlExtras } from './cli-args.js';

describe('urlExtras: what a gateway URL carries that no request may (G459, G466)', () => {
  it('names credentials, then a query string or fragment; nothing for a plain URL or a path prefix', () => {
    expect(urlExtras('https://ops:pass@gw.example.com')).toBe('a user name or password');
    expect(urlExtras('https://gw.example.com/?key=mg_secret')).toBe('a query string or fragment');
    expect(urlExtras('https://gw.example.com/gw?')).toBe('a query string or fragment');
    expect(urlExtras('https://gw.example.com/gw#frag')).toBe('a query string or fragment');
    expect(urlExtras('https://gw.example.com/gw/')).toBeUndefined();
    expect(urlExtras('not a url')).toBeUndefined();
  });
});
