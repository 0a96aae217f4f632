import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../helpers/harness.js';
import { body } from '../../helpers/json.js';
import { image, startMediaServer, type MediaServer } from '../../helpers/media-fixtures.js';

// A caller medium that passes review (its header is fine) but cannot be decoded fails the task
// with a message naming the caller's field, and the failed task reports progress 100 (G117, G118).
let h: Harness;
let srv: MediaServer;
let truncated: string;
beforeAll(async () => {
  h = await createHarness();
  srv = await startMediaServer();
  const png = await image(640, 480);
  truncated = srv.serve('/truncated.png', png.subarray(0, Math.floor(png.length / 2)), 'image/png'); // header intact, pixels cut
  srv.serve('/ok.png', png, 'image/png');
}, 60_000);
afterAll(async () => {
  await h.close();
  await srv.close();
});

async function failedTask(url: string, payload: Record<string, unknown>) {
  const res = await h.app.inject({ method: 'POST', url, headers: h.auth(), payload });
  expect(res.statusCode, res.body).toBe(200);
  const id = body(res).id as string;
  await h.waitForTask(id, ['failed', 'completed'], 60_000);
  return body(await h.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: h.auth() }));
}

describe("an undecodable caller image fails the task naming the caller's field", () => {
  it('pic: image_urls[1]', async () => {
    const q = await failedTask('/v1/pic/images', { model: 'pic', prompt: 'a fox', image_urls: [srv.url('/ok.png'), truncated] });
    expect(q).toMatchObject({ status: 'failed', progress: 100, image_url: null });
    expect(q.error).toMatch(/^sandbox: image_urls\[1\] could not be decoded as an image: /);
    expect(q.error).not.toMatch(/reference image/);
  });

  it('motion: a first frame, content[1].image_url.url', async () => {
    const q = await failedTask('/v1/motion/videos', {
      model: 'motion_2_0',
      content: [
        { type: 'text', text: 'a fox' },
        { type: 'image_url', image_url: { url: truncated }, role: 'first_frame' },
      ],
    });
    expect(q).toMatchObject({ status: 'failed', progress: 100, video_url: null });
    expect(q.error).toMatch(/^sandbox: content\[1\]\.image_url\.url could not be decoded as an image: /);
  });

  it('clip: a reference image, image_urls[0]', async () => {
    const q = await failedTask('/clip/videos', { model: 'clip_3_1_fast', prompt: 'a fox', image_urls: [truncated] });
    expect(q).toMatchObject({ status: 'failed', progress: 100 });
    expect(q.error).toMatch(/^sandbox: image_urls\[0\] could not be decoded as an image: /);
  });
});
