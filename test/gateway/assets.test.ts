import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';
import { waitFor } from '../helpers/wait-for.js';
import { image, startMediaServer, video, type MediaServer } from '../helpers/media-fixtures.js';

// The asset upload API and assetId:// references (G66-G68).
let h: Harness;
let srv: MediaServer;
beforeAll(async () => {
  h = await createHarness({ workers: false, env: { MEDIAGATE_ASSET_MAX_BYTES: '3000000', MEDIAGATE_ASSET_QUOTA_BYTES: '2000000' } });
  srv = await startMediaServer();
}, 60_000);
afterAll(async () => {
  await h.close();
  await srv.close();
});

/** A multipart/form-data body with one file part. */
function multipart(field: string, filename: string, type: string, data: Buffer): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----mg${Date.now()}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { payload: Buffer.concat([head, data, tail]), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

async function upload(data: Buffer, type = 'image/png', key = h.key, field = 'file') {
  const { payload, headers } = multipart(field, 'x', type, data);
  const res = await h.app.inject({ method: 'POST', url: '/v2/model-center/assets', headers: { ...h.auth(key), ...headers }, payload });
  return { status: res.statusCode, body: res.json() as Record<string, unknown> & { error?: { code: string; message: string; param: string | null } } };
}

describe('asset upload', () => {
  it('approves a good image and answers what review found; GET answers it again', async () => {
    const res = await upload(await image(1280, 720));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      object: 'asset',
      status: 'approved',
      reason: null,
      kind: 'image',
      format: 'png',
      width: 1280,
      height: 720,
      duration: null,
    });
    expect(res.body.id).toMatch(/^asset_[A-Za-z0-9_-]{22}$/);
    expect(typeof res.body.created).toBe('number');
    const got = await h.app.inject({ method: 'GET', url: `/v2/model-center/assets/${res.body.id as string}`, headers: h.auth() });
    expect(got.json()).toEqual(res.body);
    const other = await h.app.inject({ method: 'GET', url: `/v2/model-center/assets/${res.body.id as string}`, headers: h.auth(h.otherKey) });
    expect(other.statusCode).toBe(404);
    expect(other.json().error.code).toBe('asset_id_not_found');
  });

  it('reviews a video: kind, size, duration', async () => {
    const res = await upload(await video(1280, 720, 3, 24), 'video/mp4');
    expect(res.body).toMatchObject({ status: 'approved', kind: 'video', format: 'mp4', width: 1280, height: 720 });
    expect(res.body.duration).toBeCloseTo(3, 1);
  });

  it('rejects a medium that breaks the rules, with the reason, and keeps nothing', async () => {
    const res = await upload(await image(1500, 400));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'rejected', reason: 'file: aspect ratio 3.75 is outside (0.4, 2.5)', kind: 'image', width: 1500 });
    const notMedia = await upload(Buffer.from('hello, not a medium'), 'text/plain');
    expect(notMedia.body).toMatchObject({ status: 'rejected', kind: null });
    expect(notMedia.body.reason).toMatch(/^file: is not an image/);
  });

  it('takes JSON {url}, fetched like any caller URL', async () => {
    const url = srv.serve('/asset.png', await image(800, 800), 'image/png');
    const res = await h.app.inject({ method: 'POST', url: '/v2/model-center/assets', headers: h.auth(), payload: { url } });
    expect(res.json()).toMatchObject({ status: 'approved', width: 800, height: 800 });
    const bad = await h.app.inject({ method: 'POST', url: '/v2/model-center/assets', headers: h.auth(), payload: { link: url } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatchObject({ code: 'invalid_request', param: 'url' });
  });

  it('an upload over MEDIAGATE_ASSET_MAX_BYTES is a 413 and leaves nothing behind; a missing file field a 400', async () => {
    const big = await upload(Buffer.concat([await image(400, 400, 'bmp'), Buffer.alloc(3_100_000)]), 'image/bmp');
    expect(big.status).toBe(413);
    expect(big.body.error?.code).toBe('body_too_large');
    expect(fs.readdirSync(h.tmpDir)).toEqual([]);
    const wrongField = await upload(await image(400, 400), 'image/png', h.key, 'picture');
    expect(wrongField.status).toBe(400);
    expect(wrongField.body.error?.param).toBe('file');
  });

  it('a malformed multipart body is a 400 naming what is wrong, never a 500 (D8)', async () => {
    const send = async (payload: Buffer | string, contentType: string) => {
      const res = await h.app.inject({ method: 'POST', url: '/v2/model-center/assets', headers: { ...h.auth(), 'content-type': contentType }, payload });
      return { status: res.statusCode, error: (res.json() as { error: { code: string; message: string; param: string | null } }).error };
    };
    // cut short inside the file part: the parser finds no closing boundary
    const cut = await send('--XX\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\nabc', 'multipart/form-data; boundary=XX');
    expect(cut).toMatchObject({ status: 400, error: { code: 'invalid_request', param: 'file' } });
    expect(cut.error.message).toMatch(/^The multipart body is malformed: .*unexpected end/i);
    expect(fs.readdirSync(h.tmpDir)).toEqual([]);
    // no boundary at all
    const noBoundary = await send('abc', 'multipart/form-data');
    expect(noBoundary).toMatchObject({ status: 400, error: { code: 'invalid_request', param: 'file' } });
    expect(noBoundary.error.message).toMatch(/^The multipart body is malformed: .*boundary/i);
    // more small fields than an upload carries: the rule, not "too large"
    const boundary = 'YY';
    const fields = Array.from({ length: 20 }, (_, i) => `--${boundary}\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nx\r\n`).join('');
    const file = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\nabc\r\n--${boundary}--\r\n`;
    const many = await send(fields + file, `multipart/form-data; boundary=${boundary}`);
    expect(many).toMatchObject({ status: 400, error: { code: 'invalid_request', param: 'file' } });
    expect(many.error.message).toBe('A multipart upload carries one file, in the field "file", and at most 10 other fields of at most 1024 bytes each');
    // a file part under another name first: named in the answer
    const other = await upload(await image(40, 40), 'image/png', h.key, 'other');
    expect(other.status).toBe(400);
    expect(other.body.error?.message).toBe('file is required: send the medium as the multipart field "file" (the file part is named "other")');
  });

  it('JSON {url}: a url that is no string says so', async () => {
    const post = (payload: unknown) => h.app.inject({ method: 'POST', url: '/v2/model-center/assets', headers: h.auth(), payload: payload as object });
    expect((await post({ url: 5 })).json().error).toMatchObject({ param: 'url', message: expect.stringMatching(/^url must be a string: .* \(got number\)$/) });
    expect((await post({})).json().error).toMatchObject({ param: 'url', message: expect.stringMatching(/^url is required: /) });
    expect((await post({ url: 'ftp://example.com/a.png' })).json().error).toMatchObject({
      param: 'url',
      message: expect.stringMatching(/^url must be a public http\(s\) URL/),
    });
  });

  it('a key past its storage quota gets a 403; another key is unaffected', async () => {
    const bmp = await image(700, 700, 'bmp'); // ~1.47 MB
    const first = await upload(bmp, 'image/bmp', h.otherKey);
    expect(first.body.status).toBe('approved');
    const second = await upload(bmp, 'image/bmp', h.otherKey);
    expect(second.status).toBe(403);
    expect(second.body.error?.code).toBe('asset_quota_exceeded');
    // deleting an asset gives its share back at once; only its owner can delete it
    const del = (key: string) => h.app.inject({ method: 'DELETE', url: `/v2/model-center/assets/${first.body.id as string}`, headers: h.auth(key) });
    expect((await del(h.key)).statusCode).toBe(404);
    const deleted = await del(h.otherKey);
    expect(deleted.json()).toEqual({ id: first.body.id, object: 'asset', deleted: true });
    expect((await del(h.otherKey)).statusCode).toBe(404);
    const used = await h.app.inject({
      method: 'POST',
      url: '/v1/pic/images',
      headers: h.auth(h.otherKey),
      payload: { model: 'pic', prompt: 'x', image_urls: [`assetId://${first.body.id as string}`] },
    });
    expect(used.json().error.code).toBe('asset_not_found');
    expect((await upload(bmp, 'image/bmp', h.otherKey)).body.status).toBe('approved');
    expect((await upload(await image(400, 400))).status).toBe(200);
  });
});

describe('uploads stream to disk', () => {
  it('the file is written to the tmp folder while it arrives, then moved (the same file) into the asset folder', async () => {
    // The test sends the first part of the upload and sends the rest only once it has seen that
    // part on disk: an upload read whole into memory first would never show it. The inode shows
    // the approved file was renamed into place, not written again.
    const bmp = await image(700, 700, 'bmp'); // ~1.47 MB
    const { payload, headers } = multipart('file', 'x.bmp', 'image/bmp', bmp);
    const first = 1024 * 1024;
    const body = new PassThrough();
    const answering = h.app.inject({
      method: 'POST',
      url: '/v2/model-center/assets',
      headers: { ...h.auth(), ...headers, 'content-length': String(payload.length) },
      payload: body,
    });
    body.write(payload.subarray(0, first));
    const tmp = h.tmpDir;
    const partial = await waitFor(
      () => fs.readdirSync(tmp).find((f) => f.endsWith('.part') && fs.statSync(path.join(tmp, f)).size >= first / 2),
      10_000,
      'the first part on disk',
    );
    const inode = fs.statSync(path.join(tmp, partial)).ino;
    body.end(payload.subarray(first));
    const res = await answering;
    expect(res.json()).toMatchObject({ status: 'approved', kind: 'image', format: 'bmp', width: 700, bytes: bmp.length });
    const stored = path.join(h.dataDir, 'assets', res.json().id as string, 'asset.bmp');
    expect(fs.statSync(stored).ino).toBe(inode);
    expect(fs.readFileSync(stored).equals(bmp)).toBe(true);
    expect(fs.readdirSync(tmp)).toEqual([]);
    await h.app.inject({ method: 'DELETE', url: `/v2/model-center/assets/${res.json().id as string}`, headers: h.auth() }); // its quota share back
  });
});

describe('assetId:// wherever a media URL is', () => {
  it('is accepted for its owner, checked against the family, linked into the task', async () => {
    const asset = (await upload(await image(1280, 720))).body;
    const res = await h.app.inject({
      method: 'POST',
      url: '/v2/model-center/tasks',
      headers: h.auth(),
      payload: { model: 'sd_2.0_fast_discount', prompt: 'x', reference_images: [`assetId://${asset.id as string}`] },
    });
    expect(res.statusCode, res.body).toBe(200);
    const task = (await h.store.tasks.get(res.json().id))!;
    expect((task.request.media as { images: Array<{ stored?: string; facts?: { width: number } }> }).images[0]).toMatchObject({
      stored: '0-images',
      facts: { width: 1280 },
    });
  });

  it("another key's asset, an unknown one, or a family rule it breaks is a 400 naming the field", async () => {
    const asset = (await upload(await image(1280, 720))).body;
    const other = await h.app.inject({
      method: 'POST',
      url: '/v1/pic/images',
      headers: h.auth(h.otherKey),
      payload: { model: 'pic', prompt: 'x', image_urls: [`assetId://${asset.id as string}`] },
    });
    expect(other.statusCode).toBe(400);
    expect(other.json().error).toMatchObject({ code: 'asset_not_found', param: 'image_urls[0]' });
    const unknown = await h.app.inject({
      method: 'POST',
      url: '/v1/pic/images',
      headers: h.auth(),
      payload: { model: 'pic', prompt: 'x', image_urls: ['assetId://nope'] },
    });
    expect(unknown.json().error).toMatchObject({ code: 'asset_not_found', param: 'image_urls[0]' });
    // reel Form B at 9:16 takes only 720x1280
    const reel = await h.app.inject({
      method: 'POST',
      url: '/reel/videos',
      headers: h.auth(),
      payload: { model: 'reelOa2Plus', prompt: 'x', image_urls: [`assetId://${asset.id as string}`] },
    });
    expect(reel.statusCode).toBe(400);
    expect(reel.json().error).toMatchObject({ code: 'invalid_media', param: 'image_urls[0]' });
  });
});
