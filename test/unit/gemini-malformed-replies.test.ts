/**
 * The gemini adapter fed replies of the wrong shape (G272, G453): each start (an image's
 * generateContent, a Veo predictLongRunning) sends one create and ends in a way the engine never
 * creates again for (an unreadable create, never a TypeError, never the channel's fault), and each
 * check of a Veo operation is answered, or is a reply problem the engine checks a bounded number
 * of times, never an error it would look at again until the attempt time limit. A Veo result named
 * at Google's API while a proxy is the configured base is fetched through the proxy, with the key (G452).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planClipTask } from '../../src/contract/clip.js';
import { planPicTask } from '../../src/contract/pic.js';
import { createGeminiProvider } from '../../src/providers/gemini/index.js';
import type { MediaProvider, RemoteFile } from '../../src/providers/types.js';
import { image } from '../helpers/media-fixtures.js';
import {
  classifyCheck,
  classifyStart,
  malformedVariants,
  said,
  startScriptedUpstream,
  type Reply,
  type ScriptedUpstream,
} from '../helpers/malformed-replies.js';
import { asBody, jobOfPlan, providerContext } from '../helpers/provider-jobs.js';

const OPERATION = 'models/veo-3.1-generate-preview/operations/op1';
const KEY = 'AIza-test-key';
let upstream: ScriptedUpstream;
let provider: MediaProvider;
/** What the upstream answers next to any request. */
let next: Reply;
let png: string;

beforeAll(async () => {
  png = (await image(8, 8, 'png')).toString('base64');
  upstream = await startScriptedUpstream(() => next);
  provider = createGeminiProvider({ id: 'gem', baseUrl: `${upstream.origin}/v1beta`, apiKey: KEY, timeoutMs: 10_000 });
});
afterAll(async () => {
  await provider?.close?.();
  await upstream?.close();
});

const pic = () => jobOfPlan(planPicTask(asBody({ model: 'pic-2', prompt: 'a fox' })), 'gemini-3-pro-image-preview');
const clip = () => jobOfPlan(planClipTask(asBody({ model: 'clip_3_1_fast', prompt: 'a fox runs' })), 'veo-3.1-generate-preview');
const validImage = () => ({
  candidates: [{ content: { parts: [{ inlineData: { mimeType: 'image/png', data: png } }] }, finishReason: 'STOP' }],
  responseId: 'r1',
});
const validOperation = (uri = `${upstream.origin}/v1beta/files/f1:download?alt=media`) => ({
  name: OPERATION,
  done: true,
  response: { generateVideoResponse: { generatedSamples: [{ video: { uri } }] } },
});

describe('gemini: image starts answered 200 with the wrong shape', () => {
  it('each sends one create and ends as made, refused or an unreadable create; never the channel, never a TypeError', async () => {
    const wrong: string[] = [];
    for (const [name, body] of malformedVariants(validImage())) {
      next = { body };
      const creates = upstream.count('POST', '/v1beta/models/');
      const r = await classifyStart(() => provider.start!(pic(), providerContext()));
      expect(upstream.count('POST', '/v1beta/models/') - creates, name).toBe(1);
      // a candidate that ends without an image for a reason of its own is a failed attempt (G147)
      const documented = r.class === 'retried (plain error)' && (r.error as Error).constructor === Error && /made no image/.test((r.error as Error).message);
      if (!['done', 'unreadable create', 'refused'].includes(r.class) && !documented) wrong.push(`${name}: ${said(r)}`);
    }
    expect(wrong).toEqual([]);
  });

  it.each([
    ['parts not a list', { candidates: [{ content: { parts: { text: 'x' } } }] }],
    ['candidates a string', { candidates: 'abc' }],
    ['an inlineData part without data', { candidates: [{ content: { parts: [{ inlineData: { mimeType: 'image/png' } }] } }] }],
    ['a finishMessage that is not text', { candidates: [{ content: { parts: [] }, finishMessage: 5, finishReason: 'STOP' }] }],
  ])('%s: an unexpected reply', async (_name, body) => {
    next = { body: JSON.stringify(body) };
    const r = await classifyStart(() => provider.start!(pic(), providerContext()));
    expect(r.class === 'unreadable create' || /made no image/.test((r.error as Error).message), said(r)).toBe(true);
    expect(r.error).not.toBeInstanceOf(TypeError);
  });
});

describe('gemini: Veo starts answered 200 with the wrong shape', () => {
  it('each sends one create and is started or an unreadable create', async () => {
    const wrong: string[] = [];
    for (const [name, body] of malformedVariants({ name: OPERATION })) {
      next = { body };
      const creates = upstream.count('POST', '/v1beta/models/');
      const r = await classifyStart(() => provider.start!(clip(), providerContext()));
      expect(upstream.count('POST', '/v1beta/models/') - creates, name).toBe(1);
      if (!['started', 'unreadable create'].includes(r.class)) wrong.push(`${name}: ${said(r)}`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('gemini: Veo checks answered 200 with the wrong shape', () => {
  it('each is answered (pending, completed, failed) or a reply problem checked a bounded number of times', async () => {
    const wrong: string[] = [];
    const all = [
      ...malformedVariants(validOperation()),
      ...malformedVariants({ name: OPERATION, done: true, response: { generateVideoResponse: { raiMediaFilteredCount: 1, raiMediaFilteredReasons: ['r'] } } }),
      ...malformedVariants({ name: OPERATION, done: true, error: { code: 3, message: 'bad' } }),
    ];
    for (const [name, body] of all) {
      next = { body };
      const r = await classifyCheck(() => provider.check!({ id: OPERATION }, clip(), providerContext()));
      if (r.class === 'checked again (unbounded)') wrong.push(`${name}: ${said(r)}`);
    }
    expect(wrong).toEqual([]);
  });

  it.each([
    ['generatedSamples not a list', { done: true, response: { generateVideoResponse: { generatedSamples: { video: {} } } } }],
    ['a sample that is null', { done: true, response: { generateVideoResponse: { generatedSamples: [null] } } }],
    ['raiMediaFilteredReasons of numbers', { done: true, response: { generateVideoResponse: { raiMediaFilteredReasons: [5] } } }],
    ['an error message that is not text', { done: true, error: { code: 13, message: { x: 1 } } }],
    ['a uri that is no URL', { done: true, response: { generateVideoResponse: { generatedSamples: [{ video: { uri: 'http://' } }] } } }],
  ])('%s: never a TypeError', async (_name, body) => {
    next = { body: JSON.stringify({ name: OPERATION, ...body }) };
    const r = await classifyCheck(() => provider.check!({ id: OPERATION }, clip(), providerContext()));
    expect(r.class, said(r)).not.toBe('checked again (unbounded)');
  });
});

describe('gemini behind a proxy (G452)', () => {
  it('a result named at Google is fetched through the configured base, with the key', async () => {
    next = { body: JSON.stringify(validOperation('https://generativelanguage.googleapis.com/v1beta/files/abc:download?alt=media')) };
    const out = await provider.check!({ id: OPERATION }, clip(), providerContext());
    expect(out.state).toBe('completed');
    const file = (out as Extract<typeof out, { state: 'completed' }>).output.files[0] as RemoteFile;
    expect(file).toEqual({
      url: `${upstream.origin}/v1beta/files/abc:download?alt=media`,
      kind: 'video',
      headers: { 'x-goog-api-key': KEY },
      trusted: true,
    });
  });

  it('a result anywhere else gets neither the key nor trust', async () => {
    next = { body: JSON.stringify(validOperation('https://storage.example/v/abc.mp4')) };
    const out = await provider.check!({ id: OPERATION }, clip(), providerContext());
    expect((out as Extract<typeof out, { state: 'completed' }>).output.files[0]).toEqual({ url: 'https://storage.example/v/abc.mp4', kind: 'video' });
  });
});
