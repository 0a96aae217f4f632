import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';
import { body } from '../helpers/json.js';
import { countTasksByStatus } from '../helpers/task-rows.js';
import { expectInWindow, openSecondsWindow } from '../helpers/seconds-window.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ workers: false, reviewMedia: false });
});
afterAll(async () => {
  await h.close();
});

const submit = (payload: unknown, headers: Record<string, string> = {}) =>
  h.app.inject({
    method: 'POST',
    url: '/v1/pic/images',
    headers: { ...h.auth(), 'content-type': 'application/json', ...headers },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });

// Written out from the interface's image table (docs/reference/api/pic.md) and the operator's price list (G11,
// src/contract/catalog.ts), not imported: a wrong list or price in src must fail here.
const PIC_MODELS = ['pic', 'pic-pro', 'pic-pro-stable', 'pic-2-stable', 'pic-2'] as const;
const PIC_RESOLUTIONS = ['1k', '2k', '4k'] as const;
const PIC_SIZES = ['1:1', '16:9', '9:16', '4:3', '3:4', '3:2', '2:3', '5:4', '4:5', '21:9'] as const;
/** Credits per task. */
const PIC_PRICES: Record<(typeof PIC_MODELS)[number], number> = { pic: 1, 'pic-2': 2, 'pic-2-stable': 2, 'pic-pro': 4, 'pic-pro-stable': 4 };
const LONG_SIDE = { '1k': 1024, '2k': 2048, '4k': 4096 } as const;

/** D19: long side by resolution (1k where the model ignores it), aspect within 1%, 1:1 by default. */
function expectedSize(model: string, resolution: string | undefined, size: string | undefined) {
  const effective = model === 'pic-2' || model === 'pic-pro' ? (resolution ?? '1k') : '1k';
  const long = LONG_SIDE[effective as keyof typeof LONG_SIDE];
  const [w, h2] = (size ?? '1:1').split(':').map(Number) as [number, number];
  return { long, ratio: w / h2 };
}

describe('pic create: every model x resolution x size is accepted and planned at the right pixel size', () => {
  const cases = PIC_MODELS.flatMap((model) =>
    [undefined, ...PIC_RESOLUTIONS].flatMap((resolution) => [undefined, ...PIC_SIZES].map((size) => ({ model, resolution, size }))),
  );
  it.each(cases)('$model resolution=$resolution size=$size', async ({ model, resolution, size }) => {
    const window = openSecondsWindow();
    const res = await submit({ model, prompt: 'a red fox', ...(resolution && { resolution }), ...(size && { size }) });
    expect(res.statusCode).toBe(200);
    const b = body(res);
    expect(b).toMatchObject({ object: 'image', model, status: 'queued', error: null });
    expect(b.id).toMatch(/^task_[A-Za-z0-9_-]{30}$/);
    expect(Number.isInteger(b.created)).toBe(true);
    expectInWindow(b.created, window);
    const task = (await h.store.tasks.get(b.id))!;
    expect(task.amount).toBe(PIC_PRICES[model]);
    const out = task.request.output as { width: number; height: number; format: string };
    const want = expectedSize(model, resolution, size);
    expect(Math.max(out.width, out.height)).toBe(want.long);
    expect(Math.abs(out.width / out.height - want.ratio) / want.ratio).toBeLessThan(0.01);
    expect(out.format).toBe('png');
  });
});

describe('pic create: accepted edge values', () => {
  it('accepts exactly 6 image_urls', async () => {
    const urls = Array.from({ length: 6 }, (_, i) => `https://example.com/${i}.png`);
    expect((await submit({ model: 'pic', prompt: 'x', image_urls: urls })).statusCode).toBe(200);
  });
  it('ignores unknown extra fields (D11)', async () => {
    expect((await submit({ model: 'pic', prompt: 'x', n: 3, style: 'vivid' })).statusCode).toBe(200);
  });
  it('accepts a charset in the content type', async () => {
    expect((await submit({ model: 'pic', prompt: 'x' }, { 'content-type': 'application/json; charset=utf-8' })).statusCode).toBe(200);
  });
});

describe('pic create: every broken rule is a 400 naming the field and the rule', () => {
  const seven = Array.from({ length: 7 }, (_, i) => `https://example.com/${i}.png`);
  const cases: Array<{ name: string; payload: unknown; param: string | null; code: string; message: RegExp }> = [
    { name: 'missing model', payload: { prompt: 'x' }, param: 'model', code: 'invalid_request', message: /model is required/ },
    {
      name: 'unknown model',
      payload: { model: 'pic-fast', prompt: 'x' },
      param: 'model',
      code: 'unknown_model',
      message: /model must be one of: pic, pic-pro, pic-pro-stable, pic-2-stable, pic-2 \(got "pic-fast"\)/,
    },
    { name: 'model wrong type', payload: { model: 2, prompt: 'x' }, param: 'model', code: 'invalid_request', message: /model must be a string/ },
    { name: 'missing prompt', payload: { model: 'pic' }, param: 'prompt', code: 'invalid_request', message: /prompt is required/ },
    { name: 'empty prompt', payload: { model: 'pic', prompt: '' }, param: 'prompt', code: 'invalid_request', message: /prompt must not be empty/ },
    { name: 'prompt wrong type', payload: { model: 'pic', prompt: ['x'] }, param: 'prompt', code: 'invalid_request', message: /prompt must be a string/ },
    {
      name: 'unknown resolution',
      payload: { model: 'pic-2', prompt: 'x', resolution: '8k' },
      param: 'resolution',
      code: 'invalid_request',
      message: /resolution must be one of: 1k, 2k, 4k/,
    },
    {
      name: 'resolution wrong case',
      payload: { model: 'pic-2', prompt: 'x', resolution: '2K' },
      param: 'resolution',
      code: 'invalid_request',
      message: /resolution must be one of/,
    },
    {
      name: 'unknown size',
      payload: { model: 'pic', prompt: 'x', size: '2:1' },
      param: 'size',
      code: 'invalid_request',
      message: /size must be one of: 1:1, 16:9/,
    },
    {
      name: 'size as pixels',
      payload: { model: 'pic', prompt: 'x', size: '1024x1024' },
      param: 'size',
      code: 'invalid_request',
      message: /size must be one of/,
    },
    {
      name: '7 image_urls',
      payload: { model: 'pic', prompt: 'x', image_urls: seven },
      param: 'image_urls',
      code: 'invalid_request',
      message: /image_urls allows at most 6 items \(got 7\)/,
    },
    {
      name: 'image_urls not an array',
      payload: { model: 'pic', prompt: 'x', image_urls: 'https://a/b.png' },
      param: 'image_urls',
      code: 'invalid_request',
      message: /image_urls must be an array/,
    },
    {
      name: 'image_urls item not a URL',
      payload: { model: 'pic', prompt: 'x', image_urls: ['https://a/b.png', 'ftp://a/b.png'] },
      param: 'image_urls[1]',
      code: 'invalid_request',
      message: /image_urls\[1\] must be an absolute http\(s\) URL/,
    },
    { name: 'body is an array', payload: [], param: null, code: 'invalid_json', message: /must be a JSON object/ },
    { name: 'body is null', payload: 'null', param: null, code: 'invalid_json', message: /must be a JSON object/ },
    { name: 'body is a string', payload: '"hello"', param: null, code: 'invalid_json', message: /must be a JSON object/ },
    { name: 'truncated JSON', payload: '{"model":"pic","prompt":', param: null, code: 'invalid_json', message: /not valid JSON/ },
  ];
  it.each(cases)('$name', async ({ payload, param, code, message }) => {
    const res = await submit(payload);
    expect(res.statusCode).toBe(400);
    const err = body(res).error;
    expect(err).toEqual({ message: expect.any(String), type: 'invalid_request_error', param, code });
    expect(err.message).toMatch(message);
  });

  it('a body that is not JSON by content type is a 400', async () => {
    const res = await submit('model=pic', { 'content-type': 'text/plain' });
    expect(res.statusCode).toBe(400);
    expect(body(res).error.code).toBe('unsupported_content_type');
  });

  it('an empty body is a 400', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/v1/pic/images', headers: h.auth() });
    expect(res.statusCode).toBe(400);
    expect(body(res).error.type).toBe('invalid_request_error');
  });

  it('a body over the limit is a 413 in the standard error body', async () => {
    const res = await submit({ model: 'pic', prompt: 'x'.repeat(h.config.bodyLimit + 10) });
    expect(res.statusCode).toBe(413);
    expect(body(res).error.code).toBe('body_too_large');
  });

  it('nothing is stored for a rejected request', async () => {
    const before = Object.values(await countTasksByStatus(h.store.tasks)).reduce((a, b) => a + b, 0);
    await submit({ model: 'nope', prompt: 'x' });
    const after = Object.values(await countTasksByStatus(h.store.tasks)).reduce((a, b) => a + b, 0);
    expect(after).toBe(before);
  });
});
