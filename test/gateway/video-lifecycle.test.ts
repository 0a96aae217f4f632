import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';
import { tempDir } from '../helpers/temp-root.js';
import { body } from '../helpers/json.js';
import { probeVideo } from '../helpers/probe-video.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

const cases = [
  {
    name: 'motion 1.5 pro 480p, 4 s, audio by default',
    url: '/v1/motion/videos',
    payload: { model: 'motion_1_5_pro_480p', content: [{ type: 'text', text: 'a red fox' }], ratio: '16:9', duration: 4 },
    want: { width: 854, height: 480, seconds: 4, audio: 'aac' },
  },
  {
    name: 'videos_fast 9:16, 4 s, no audio',
    url: '/v1/videos/videos',
    payload: { model: 'videos_fast', prompt: 'a red fox', duration: '4', ratio: '9:16' },
    want: { width: 720, height: 1280, seconds: 4, audio: null },
  },
  { name: 'clip Form A, 8 s 1280x720', url: '/clip/videos', payload: { prompt: 'a red fox' }, want: { width: 1280, height: 720, seconds: 8, audio: null } },
];

describe('video lifecycle through the sandbox: the MP4 matches the request', () => {
  it.each(cases)(
    '$name',
    async ({ url, payload, want }) => {
      const created = body(await h.app.inject({ method: 'POST', url, headers: h.auth(), payload }));
      const id = (created.id ?? created.data?.projectId) as string;
      const task = await h.waitForTask(id, ['completed', 'failed'], 60_000);
      expect(task.error).toBeNull();
      const q = body(await h.app.inject({ method: 'GET', url: `/v1/result/${id}`, headers: h.auth() }));
      expect(q.status).toBe('completed');
      expect(q.actualDuration).toBe(want.seconds);
      const res = await h.app.inject({ method: 'GET', url: String(q.video_url).replace(h.config.publicUrl, '') });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('video/mp4');
      const file = path.join(tempDir('video-lifecycle-'), 'v.mp4');
      fs.writeFileSync(file, res.rawPayload);
      const facts = probeVideo(file);
      expect(facts).toMatchObject({ codec: 'h264', width: want.width, height: want.height, frames: want.seconds * 24, audio: want.audio });
    },
    90_000,
  );
});
