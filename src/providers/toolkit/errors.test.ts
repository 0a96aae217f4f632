/**
 * How upstream failures are classified (G89, G97): table-driven over statuses and bodies in the
 * shapes the interface gives errors (the standard body, the videos and chat envelopes, text).
 */
import { describe, expect, it, vi } from 'vitest';
import { AppError } from '../../errors.js';
import { ChannelError, GenerationKeyConflict, UnexpectedReply, UnrecoverableError } from '../types.js';
import { chatFailure, chatParamOf, createFailure, queryFailure, readErrorBody, retryAfterMsOf, scrubberFor, transportFailure } from './errors.js';

const KEY = 'mg_secretsecretsecretsecret';
const scrub = scrubberFor(KEY, [new URL('https://up.example.com/api'), new URL('http://10.0.0.7:8790')]);
const standard = (message: string, param: string | null = null, code = 'invalid_request') =>
  JSON.stringify({ error: { message, type: 'invalid_request_error', param, code } });

describe('error bodies', () => {
  it.each([
    [standard('prompt is required', 'prompt'), { message: 'prompt is required', param: 'prompt', code: 'invalid_request' }],
    [
      JSON.stringify({ code: '400', msg: 'duration must be an integer from 4 to 15 (got 3)', data: null }),
      { message: 'duration must be an integer from 4 to 15 (got 3)', code: '400' },
    ],
    [JSON.stringify({ code: '400', msg: 'messages is required', data: null, success: false }), { message: 'messages is required', code: '400' }],
    [JSON.stringify({ error: 'plain string' }), { message: 'plain string' }],
    [JSON.stringify({ message: 'x', param: 'size' }), { message: 'x', param: 'size' }],
    ['<html>Bad Gateway</html>', { message: '<html>Bad Gateway</html>' }],
    ['', { message: undefined }],
  ])('%s', (text, expected) => {
    expect(readErrorBody(text)).toMatchObject(expected);
  });
});

describe('scrubbing quoted upstream text', () => {
  it('removes the upstream addresses, signatures and the key', () => {
    const said = scrub(`could not fetch https://up.example.com/api/files/x?exp=1&sig=abc123 from 10.0.0.7:8790 or up.example.com with ${KEY}`);
    expect(said).not.toMatch(/up\.example\.com|10\.0\.0\.7|abc123|mg_secret/);
    expect(said).toContain('[upstream]');
    expect(said).toContain('sig=[redacted]');
  });
});

describe('create failures (G97)', () => {
  const retry = { 'retry-after': '7' };
  it.each<
    [
      string,
      number,
      Record<string, string>,
      string,
      'unrecoverable' | 'channel' | 'retryable' | 'key-conflict',
      RegExp,
      { param?: string; retryAfterMs?: number; code?: string }?,
    ]
  >([
    ['400 with param', 400, {}, standard('prompt must not be empty', 'prompt'), 'unrecoverable', /^prompt must not be empty$/, { param: 'prompt' }],
    [
      '400 whose message does not start with the field',
      400,
      {},
      standard('the value is out of range', 'duration'),
      'unrecoverable',
      /^duration: the value is out of range$/,
      { param: 'duration' },
    ],
    [
      '400 exclusive pair',
      400,
      {},
      standard('size and aspect_ratio are mutually exclusive', 'size,aspect_ratio', 'exclusive_fields'),
      'unrecoverable',
      /size and aspect_ratio/,
      { param: 'size,aspect_ratio' },
    ],
    ['400 videos envelope', 400, {}, JSON.stringify({ code: '400', msg: 'prompt is too long', data: null }), 'unrecoverable', /^prompt is too long$/],
    ['404 on create', 404, {}, standard('No endpoint POST /v1/x', null, 'route_not_found'), 'unrecoverable', /No endpoint POST/],
    ['413', 413, {}, standard('The request body is larger than this server accepts', null, 'body_too_large'), 'unrecoverable', /larger than/],
    ['422 without a body', 422, {}, '', 'unrecoverable', /refused the request \(HTTP 422\)/],
    ['401', 401, {}, standard('bad key', null, 'invalid_api_key'), 'channel', /refused the gateway's credentials \(HTTP 401\)/, { code: 'upstream_error' }],
    ['402', 402, {}, '', 'channel', /no credit left \(HTTP 402\)/],
    ['403', 403, {}, '', 'channel', /credentials \(HTTP 403\)/],
    ['408', 408, {}, '', 'channel', /timed out \(HTTP 408\)/, { code: 'upstream_timeout' }],
    ['429 with Retry-After', 429, retry, standard('slow down', null, 'rate_limited'), 'channel', /rate limiting/, { retryAfterMs: 7000, code: 'rate_limited' }],
    ['500', 500, {}, standard('Internal server error', null, 'internal_error'), 'channel', /failed \(HTTP 500\): Internal server error/],
    ['503 with Retry-After', 503, retry, '', 'channel', /failed \(HTTP 503\)/, { retryAfterMs: 7000 }],
    ['503 without Retry-After', 503, {}, '', 'channel', /failed \(HTTP 503\)/, { retryAfterMs: undefined }],
    ['302 redirect', 302, {}, '', 'channel', /redirect/],
    [
      '409 idempotency_in_progress',
      409,
      { 'retry-after': '2' },
      standard('still running', 'Idempotency-Key', 'idempotency_in_progress'),
      'channel',
      /still creating/,
      { retryAfterMs: 2000 },
    ],
    [
      '409 idempotency_key_reused',
      409,
      {},
      standard('used with another body', 'Idempotency-Key', 'idempotency_key_reused'),
      'key-conflict',
      /conflict \(HTTP 409 idempotency_key_reused\)/,
    ],
    ['409 of another kind', 409, {}, standard('busy', null, 'conflict'), 'retryable', /conflict \(HTTP 409 conflict\): busy/],
  ])('%s', (_name, status, headers, text, kind, message, extra = {}) => {
    const err = createFailure('primary', status, headers, text, scrub);
    if (kind === 'unrecoverable') expect(err).toBeInstanceOf(UnrecoverableError);
    if (kind === 'channel') expect(err).toBeInstanceOf(ChannelError);
    if (kind === 'key-conflict') expect(err).toBeInstanceOf(GenerationKeyConflict);
    if (kind === 'retryable') expect(err).not.toBeInstanceOf(GenerationKeyConflict);
    if (kind === 'retryable' || kind === 'key-conflict') {
      expect(err).toBeInstanceOf(AppError);
      expect(err).not.toBeInstanceOf(ChannelError);
      expect((err as AppError).retryable).toBe(true);
    }
    expect(err.message).toMatch(message);
    if (extra.param !== undefined) expect((err as UnrecoverableError).param).toBe(extra.param);
    if ('retryAfterMs' in extra) expect((err as ChannelError).retryAfterMs).toBe(extra.retryAfterMs);
    if (extra.code !== undefined) expect((err as ChannelError).code).toBe(extra.code);
  });

  it('never quotes the upstream address or key', () => {
    const err = createFailure('primary', 400, {}, standard(`image_urls[0]: could not fetch https://up.example.com/api/x (key ${KEY})`, 'image_urls[0]'), scrub);
    expect(err.message).not.toMatch(/up\.example\.com|mg_secret/);
    expect(err.message).toMatch(/^image_urls\[0\]: could not fetch/);
  });
});

describe('query failures', () => {
  it.each([404, 410])('%s: the generation is gone (a new one may start)', (status) => {
    const r = queryFailure('primary', status, {}, standard('No task'), scrub);
    expect('gone' in r && r.gone.message).toMatch(/no longer has the generation/);
  });
  it("400: a reply about this one task, looked at again on the same generation, not the channel's fault (G272)", () => {
    const r = queryFailure('primary', 400, {}, '', scrub);
    expect(r).toBeInstanceOf(UnexpectedReply);
    expect((r as UnexpectedReply).message).toMatch(/refused the status query \(HTTP 400\)/);
  });
  it.each([
    [401, /credentials/],
    [429, /rate limiting/],
    [502, /failed \(HTTP 502\)/],
  ])('%s: look again later', (status, message) => {
    const r = queryFailure('primary', status, { 'retry-after': '3' }, '', scrub);
    expect(r).toBeInstanceOf(ChannelError);
    expect((r as ChannelError).message).toMatch(message);
  });
});

describe('chat failures', () => {
  const envelope = (code: string, msg: string) => JSON.stringify({ code, msg, data: null, success: false });
  it.each<[string, number, string, string, number, string | undefined, boolean]>([
    [
      'a field of the request',
      400,
      envelope('400', 'messages[1].content[0].type must be one of: text, image_url (got "video_url")'),
      'invalid_request',
      400,
      'messages[1].content[0].type',
      false,
    ],
    ['temperature', 400, envelope('400', 'temperature must be <= 2 (got 3)'), 'invalid_request', 400, 'temperature', false],
    [
      'context length',
      400,
      envelope('400', 'messages: the prompt is too long for the model context length'),
      'context_length_exceeded',
      400,
      'messages',
      false,
    ],
    [
      "the route's model name unknown there",
      400,
      envelope('400', 'model must be one of: chat-2.5-flash (got "nope")'),
      'upstream_error',
      502,
      undefined,
      false,
    ],
    ['401', 401, envelope('401', 'Unknown API key'), 'upstream_error', 502, undefined, true],
    ['429', 429, envelope('429', 'Too many requests'), 'rate_limited', 429, undefined, true],
    ['503', 503, envelope('503', 'shutting down'), 'upstream_error', 502, undefined, true],
    ['408', 408, '', 'upstream_timeout', 504, undefined, true],
  ])('%s', (_name, status, text, code, httpStatus, param, channel) => {
    const err = chatFailure('primary', status, { 'retry-after': '4' }, text, scrub, 'nope');
    expect(err.code).toBe(code);
    expect(err.status).toBe(httpStatus);
    expect(err.param).toBe(param);
    expect(err instanceof ChannelError).toBe(channel);
    if (code === 'rate_limited') expect(err.headers?.['Retry-After']).toBe('4');
  });

  it.each([
    ['messages[0].content is required', 'messages[0].content'],
    ['stop allows at most 4 items (got 5)', 'stop'],
    ['max_completion_tokens must be an integer', 'max_completion_tokens'],
    ['The body is not valid JSON', undefined],
    ['messagesX is odd', undefined],
  ])('the field of a chat message: %s', (message, param) => {
    expect(chatParamOf(message)).toBe(param);
  });
});

describe('transport failures', () => {
  const withCode = (code: string) => Object.assign(new Error(`connect ${code} 10.0.0.7:8790`), { code });
  it.each([
    ['ECONNREFUSED', /connection refused/, 'upstream_error'],
    ['ENOTFOUND', /does not resolve/, 'upstream_error'],
    ['ECONNRESET', /broke before its answer was complete/, 'upstream_error'],
    ['UND_ERR_CONNECT_TIMEOUT', /could not connect .* in time/, 'upstream_timeout'],
    ['UND_ERR_SOCKET', /broke/, 'upstream_error'],
    ['EWHATEVER', /failed \(EWHATEVER\)/, 'upstream_error'],
  ])('%s', (code, message, errorCode) => {
    const err = transportFailure('primary', withCode(code));
    expect(err).toBeInstanceOf(ChannelError);
    expect(err.message).toMatch(message);
    expect(err.message).toContain('"primary"');
    expect(err.message).not.toContain('10.0.0.7');
    expect(err.code).toBe(errorCode);
  });
});

describe('Retry-After', () => {
  it.each([
    [{ 'retry-after': '3' }, 3000],
    [{ 'retry-after': '0.2' }, 1000],
    [{ 'retry-after-ms': '2500' }, 3000],
    [{}, undefined],
  ])('%j', (headers, ms) => {
    expect(retryAfterMsOf(headers)).toBe(ms);
  });

  it('an HTTP date: the whole seconds from now until it, rounded up', () => {
    vi.useFakeTimers({ toFake: ['Date'] }); // "now" is the clock's, set here: no time passes between the header and the answer
    try {
      const now = Date.UTC(2026, 10, 29, 12, 0, 0, 400);
      vi.setSystemTime(now);
      // an HTTP date has whole seconds: 12:00:10 is 9.6 s away, rounded up to 10
      expect(retryAfterMsOf({ 'retry-after': new Date(now + 10_000).toUTCString() })).toBe(10_000);
      expect(retryAfterMsOf({ 'retry-after': new Date(now - 60_000).toUTCString() })).toBe(1000); // past: at least 1 s
    } finally {
      vi.useRealTimers();
    }
  });
});
