import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../helpers/harness.js';
import { waitFor } from '../helpers/wait-for.js';
import { audio, image, startMediaServer, video, type MediaServer } from '../helpers/media-fixtures.js';
import { countTasksByStatus } from '../helpers/task-rows.js';

// Submit-time review of caller media: each rule of the contract's Limits section with media made
// here, served from a loopback server (MEDIAGATE_ALLOW_PRIVATE_URLS=1 in the harness).
let h: Harness;
let srv: MediaServer;
beforeAll(async () => {
  h = await createHarness({ workers: false });
  srv = await startMediaServer();
  srv.serve('/wide.png', await image(1500, 400), 'image/png'); // aspect 3.75
  srv.serve('/ok.png', await image(1280, 720), 'image/png');
  srv.serve('/portrait.png', await image(720, 1280), 'image/png');
  srv.serve('/small.png', await image(300, 300), 'image/png');
  srv.serve('/ok.bmp', await image(800, 600, 'bmp'), 'image/bmp');
  srv.serve('/pic.avif', await image(800, 600, 'avif'), 'image/avif');
  srv.serve('/page.html', Buffer.from('<!doctype html><html><body>not an image</body></html>'), 'text/html');
  srv.serve('/v720-8s.mp4', await video(1280, 720, 8), 'video/mp4');
  srv.serve('/v360.mp4', await video(640, 360, 3), 'video/mp4');
  srv.serve('/v15fps.mp4', await video(1280, 720, 3, 15), 'video/mp4');
  srv.serve('/v1s.mp4', await video(1280, 720, 1), 'video/mp4');
  srv.serve('/v3s.mov', await video(1280, 720, 3, 24, 'mov'), 'video/quicktime');
  srv.serve('/a3s.wav', await audio(3), 'audio/wav');
  srv.serve('/a1s.mp3', await audio(1, 'mp3'), 'audio/mpeg');
  srv.serve('/a16s.wav', await audio(16), 'audio/wav');
}, 60_000);
afterAll(async () => {
  await h.close();
  await srv.close();
});

async function submit(url: string, body: Record<string, unknown>) {
  const res = await h.app.inject({ method: 'POST', url, headers: h.auth(), payload: body });
  return {
    status: res.statusCode,
    body: res.json() as { id?: string; error?: { message: string; param: string | null; code: string }; code?: string; msg?: string },
  };
}
const motion = (...urls: string[]) =>
  submit('/v1/motion/videos', {
    model: 'motion_2_0_4s_5s',
    content: [{ type: 'text', text: 'a fox' }, ...urls.map((url) => ({ type: 'image_url', image_url: { url }, role: 'reference_image' }))],
  });
const sd = (fields: Record<string, unknown>, model = 'sd_2.0_fast_discount') => submit('/v2/model-center/tasks', { model, prompt: 'a fox', ...fields });

describe('caller media rules at submit', () => {
  it.each([
    [
      'reference image aspect ratio (Model Center)',
      () => sd({ reference_images: [srv.url('/ok.png'), srv.url('/ok.png'), srv.url('/wide.png')] }),
      'reference_images[2]',
      'reference_images[2]: aspect ratio 3.75 is outside (0.4, 2.5)',
    ],
    [
      'motion image aspect ratio',
      () => motion(srv.url('/wide.png')),
      'content[1].image_url.url',
      'content[1].image_url.url: aspect ratio 3.75 is outside (0.4, 2.5)',
    ],
    [
      'motion image sides (300, 6000) exclusive',
      () => motion(srv.url('/small.png')),
      'content[1].image_url.url',
      'content[1].image_url.url: image is 300x300 px; width and height must be within (300, 6000) px',
    ],
    [
      'motion 2.0 image format',
      () => motion(srv.url('/pic.avif')),
      'content[1].image_url.url',
      'content[1].image_url.url: image format avif is not accepted here; use jpeg, png, webp, bmp, tiff, gif',
    ],
    [
      'video frame rate 24-60',
      () => sd({ reference_videos: [srv.url('/v15fps.mp4')] }),
      'reference_videos[0]',
      'reference_videos[0]: frame rate 15 fps is outside 24-60 fps',
    ],
    [
      'video length 2-15 s each',
      () => sd({ reference_videos: [srv.url('/v1s.mp4')] }),
      'reference_videos[0]',
      'reference_videos[0]: video is 1 s long; each must be 2-15 s',
    ],
    [
      'audio length 2-15 s each',
      () => sd({ reference_images: [srv.url('/ok.png')], reference_audios: [srv.url('/a1s.mp3')] }),
      'reference_audios[0]',
      /^reference_audios\[0\]: audio is 1(\.\d+)? s long; each must be 2-15 s$/,
    ],
    [
      'audio in a video field',
      () => sd({ reference_videos: [srv.url('/a3s.wav')] }),
      'reference_videos[0]',
      /reference_videos\[0\]: .*is not an accepted kind of file/,
    ],
    [
      'video total at most 15 s (videos family)',
      () => submit('/v1/videos/videos', { model: 'videos', prompt: 'x', duration: 5, referenceVideos: [srv.url('/v720-8s.mp4'), srv.url('/v720-8s.mp4')] }),
      'referenceVideos',
      'referenceVideos: the reference videos last 16 s in all; at most 15 s are allowed',
    ],
    [
      'video resolution 720-2160 px (videos family)',
      () => submit('/v1/videos/videos', { model: 'videos', prompt: 'x', duration: 5, referenceVideos: [srv.url('/v360.mp4')] }),
      'referenceVideos[0]',
      'referenceVideos[0]: video is 640x360; its resolution (shorter side) must be 720-2160 px',
    ],
    [
      'reel Form B image must match the ratio',
      () => submit('/reel/videos', { model: 'reelOa2Plus', prompt: 'x', size: '720x1280', image_urls: [srv.url('/ok.png')] }),
      'image_urls[0]',
      'image_urls[0]: image is 1280x720; this model accepts only 720x1280 (matching the requested ratio)',
    ],
    [
      'not an image at all',
      () => submit('/v1/pic/images', { model: 'pic', prompt: 'x', image_urls: [srv.url('/page.html')] }),
      'image_urls[0]',
      /image_urls\[0\]: .* is not an accepted kind of file \(Content-Type text\/html\)/,
    ],
    [
      'an unreachable URL',
      () => submit('/v1/pic/images', { model: 'pic', prompt: 'x', image_urls: [srv.url('/missing.png')] }),
      'image_urls[0]',
      /image_urls\[0\]: .*404/,
    ],
    [
      'a name that does not resolve',
      () => submit('/v1/pic/images', { model: 'pic', prompt: 'x', image_urls: ['http://no-such-host.invalid/a.png'] }),
      'image_urls[0]',
      /does not resolve/,
    ],
  ] as const)('%s -> 400 naming the field and the rule', async (_what, call, param, message) => {
    const res = await call();
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    const err = res.body.error ?? { message: res.body.msg ?? '', param: null, code: '' };
    if (typeof message === 'string') expect(err.message).toBe(message);
    else expect(err.message).toMatch(message);
    if (res.body.error) expect(err.param).toBe(param);
  });

  it('the videos family answers a bad medium in its own envelope', async () => {
    const res = await submit('/v1/videos/videos', { model: 'videos', prompt: 'x', duration: 5, referenceVideos: [srv.url('/v360.mp4')] });
    expect(res.body).toMatchObject({ code: '400', data: null });
    expect(res.body.msg).toMatch(/^referenceVideos\[0\]: video is 640x360/);
  });

  it.each([
    [
      'Model Center images, videos (mp4, mov) and audio',
      () =>
        sd({
          reference_images: [srv.url('/ok.png'), srv.url('/ok.bmp')],
          reference_videos: [srv.url('/v720-8s.mp4'), srv.url('/v3s.mov')],
          reference_audios: [srv.url('/a3s.wav')],
        }),
    ],
    [
      'sd_2.5_special_v1 takes audio up to 30 s',
      () => sd({ reference_images: [srv.url('/ok.png')], reference_audios: [srv.url('/a16s.wav')] }, 'sd_2.5_special_v1'),
    ],
    [
      'reel Form B with the matching size',
      () => submit('/reel/videos', { model: 'reelOa2Plus', prompt: 'x', size: '720x1280', image_urls: [srv.url('/portrait.png')] }),
    ],
    [
      'motion first frame',
      () =>
        submit('/v1/motion/videos', {
          model: 'motion_2_0_4s_5s',
          content: [
            { type: 'text', text: 'x' },
            { type: 'image_url', image_url: { url: srv.url('/ok.png') } },
          ],
        }),
    ],
  ] as const)('%s: accepted, the files kept for the task with what review found', async (_what, call) => {
    const res = await call();
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = res.body.id ?? (res.body as { data?: { projectId?: string } }).data?.projectId;
    const task = (await h.store.tasks.get(id!))!;
    const media = task.request.media as {
      images: Array<{ stored?: string; facts?: { kind: string } }>;
      videos: Array<{ stored?: string }>;
      firstFrame?: { stored?: string };
    };
    const refs = [...media.images, ...media.videos, ...(media.firstFrame ? [media.firstFrame] : [])];
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      expect(ref.stored).toBeTruthy();
      expect(fs.existsSync(path.join(h.dataDir, 'inputs', task.id, ref.stored!))).toBe(true);
    }
  });

  it('nothing is stored for a rejected request, and nothing is left in the tmp folder', async () => {
    const before = fs.existsSync(path.join(h.dataDir, 'inputs')) ? fs.readdirSync(path.join(h.dataDir, 'inputs')).length : 0;
    const res = await sd({ reference_images: [srv.url('/ok.png'), srv.url('/wide.png')] });
    expect(res.status).toBe(400);
    expect(fs.readdirSync(path.join(h.dataDir, 'inputs')).length).toBe(before);
    expect(fs.readdirSync(h.tmpDir)).toEqual([]);
  });
});

/** A loopback server whose routes answer from a handler (held responses, stalls); `drop()` cuts every connection. */
async function startServer(handler: http.RequestListener) {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: (p: string) => `http://127.0.0.1:${port}${p}`,
    drop: () => server.closeAllConnections(),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('caller media stream to disk', () => {
  it('a medium is written to the tmp folder while it arrives, then moved (the same file) into the task inputs', async () => {
    // The server sends the first half of the file and holds the rest until the test has seen that
    // half on disk: review that held the body in memory would never show it, and the test would
    // time out. The inode shows the accepted file was renamed into place, not written again.
    const png = await image(640, 640);
    const file = Buffer.concat([png, Buffer.alloc(1024 * 1024, 7)]); // trailing bytes: still a 640x640 PNG
    const half = 512 * 1024;
    let openGate!: () => void;
    const gate = new Promise<void>((r) => {
      openGate = r;
    });
    const held = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': file.length });
      res.write(file.subarray(0, half));
      void gate.then(() => res.end(file.subarray(half)));
    });
    try {
      const tmp = h.tmpDir;
      const submitting = submit('/v1/pic/images', { model: 'pic', prompt: 'x', image_urls: [held.url('/held.png')] });
      const partial = await waitFor(
        () => fs.readdirSync(tmp).find((f) => f.endsWith('.part') && fs.statSync(path.join(tmp, f)).size === half),
        10_000,
        'the first half on disk',
      );
      const inode = fs.statSync(path.join(tmp, partial)).ino;
      openGate();
      const res = await submitting;
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const task = (await h.store.tasks.get(res.body.id!))!;
      const ref = (task.request.media as { images: Array<{ stored: string; facts: { bytes: number; width: number } }> }).images[0]!;
      expect(ref.facts).toMatchObject({ bytes: file.length, width: 640 });
      const stored = path.join(h.dataDir, 'inputs', task.id, ref.stored);
      expect(fs.statSync(stored).ino).toBe(inode);
      expect(fs.readFileSync(stored).equals(file)).toBe(true);
      expect(fs.readdirSync(tmp)).toEqual([]);
    } finally {
      openGate();
      await held.close();
    }
  });
});

describe('review slots are shared fairly between keys', () => {
  it("a key's hanging fetches hold only its own slots: another key's review completes while they still hang", async () => {
    // 4 slots per process, 2 per key: key A's 6 requests point at a server that sends headers and
    // never a body. Key B's request must be answered while every one of A's is still pending (with
    // one limiter for all keys B would queue behind A's fetches until they time out).
    const hf = await createHarness({
      workers: false,
      env: { MEDIAGATE_MEDIA_REVIEW_SLOTS: '4', MEDIAGATE_MEDIA_REVIEW_KEY_SLOTS: '2', MEDIAGATE_MEDIA_REVIEW_TIMEOUT_MS: '60000' },
    });
    let stalls = 0;
    const stall = await startServer((_req, res) => {
      stalls++;
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': 100_000 });
      res.flushHeaders();
    });
    try {
      let pendingA = 6;
      const a = Array.from({ length: 6 }, () =>
        hf.app
          .inject({
            method: 'POST',
            url: '/v1/pic/images',
            headers: hf.auth(),
            payload: { model: 'pic', prompt: 'x', image_urls: [stall.url('/never.png')] },
          })
          .finally(() => {
            pendingA--;
          }),
      );
      await waitFor(() => (stalls >= 2 ? true : undefined), 10_000, "key A's fetches to start");
      const b = await hf.app.inject({
        method: 'POST',
        url: '/v1/pic/images',
        headers: hf.auth(hf.otherKey),
        payload: { model: 'pic', prompt: 'x', image_urls: [srv.url('/ok.png')] },
      });
      expect(b.statusCode, b.body).toBe(200);
      expect(pendingA).toBe(6); // B was answered while all of A's requests still waited
      expect(stalls).toBe(2); // A holds at most its 2 slots
      const dropping = setInterval(() => stall.drop(), 20); // A's fetches (the queued ones too) fail at once
      const answers = await Promise.all(a);
      clearInterval(dropping);
      for (const r of answers) expect(r.json().error).toMatchObject({ code: 'media_fetch_failed', param: 'image_urls[0]' });
    } finally {
      await stall.close();
      await hf.close();
    }
  }, 60_000);
});

describe('the review of one request is bounded in time', () => {
  it('a medium that never arrives is a 400 after MEDIAGATE_MEDIA_REVIEW_TIMEOUT_MS, nothing stored', async () => {
    const ht = await createHarness({ workers: false, env: { MEDIAGATE_MEDIA_REVIEW_TIMEOUT_MS: '1000' } });
    try {
      const started = Date.now();
      const res = await ht.app.inject({
        method: 'POST',
        url: '/v1/pic/images',
        headers: ht.auth(),
        payload: { model: 'pic', prompt: 'x', image_urls: [srv.stall('/stall.png')] },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('media_fetch_failed');
      // ended by the review's bound (the medium never arrives: nothing else would end it)
      expect(res.json().error.message).toBe(
        'Fetching and checking the media of this request took longer than 1 s; use faster hosting or upload them as assets',
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000); // not before it (a lower bound holds under any load)
      expect(Object.values(await countTasksByStatus(ht.store.tasks)).reduce((a, b) => a + b, 0)).toBe(0);
    } finally {
      await ht.close();
    }
  });
});

describe('reviewed media are not downloaded twice', () => {
  it('the sandbox renders from the kept copy: one request per URL in all', async () => {
    const hw = await createHarness();
    try {
      const url = srv.serve('/once.png', await image(640, 640), 'image/png');
      const res = await hw.app.inject({ method: 'POST', url: '/v1/pic/images', headers: hw.auth(), payload: { model: 'pic', prompt: 'x', image_urls: [url] } });
      expect(res.statusCode).toBe(200);
      const done = await hw.waitForTask(res.json().id);
      expect(done.status).toBe('completed');
      expect(srv.requests.get('/once.png')).toBe(1);
      // the kept copies go once the task is finished
      await waitFor(() => (fs.existsSync(path.join(hw.dataDir, 'inputs', done.id)) ? undefined : true), 5000, 'inputs removed');
    } finally {
      await hw.close();
    }
  });
});

describe('private addresses are refused at submit, in every spelling, before any request', () => {
  let hs: Harness;
  beforeAll(async () => {
    hs = await createHarness({ workers: false, env: { MEDIAGATE_ALLOW_PRIVATE_URLS: '0' } });
  });
  afterAll(async () => {
    await hs.close();
  });

  it('never reaches the loopback server', async () => {
    const port = srv.port;
    const spellings = [
      `http://127.0.0.1:${port}/ok.png`,
      `http://localhost:${port}/ok.png`,
      `http://2130706433:${port}/ok.png`,
      `http://0x7f000001:${port}/ok.png`,
      `http://0177.0.0.1:${port}/ok.png`,
      `http://127.1:${port}/ok.png`,
      `http://[::1]:${port}/ok.png`,
      `http://[::ffff:127.0.0.1]:${port}/ok.png`,
      `http://[::ffff:7f00:1]:${port}/ok.png`,
      `http://0.0.0.0:${port}/ok.png`,
      `http://169.254.169.254/latest/meta-data/`,
      `http://10.0.0.1:${port}/ok.png`,
    ];
    const before = srv.total();
    for (const url of spellings) {
      const res = await hs.app.inject({ method: 'POST', url: '/v1/pic/images', headers: hs.auth(), payload: { model: 'pic', prompt: 'x', image_urls: [url] } });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'url_not_allowed', param: 'image_urls[0]' });
    }
    expect(srv.total()).toBe(before);
  });
});
