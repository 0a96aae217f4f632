/**
 * The create body of every family and form, from what submit stores (the `plan*Task` functions),
 * against bodies written from the interface's tables: the family's own fields, one member of each
 * exclusive pair, no field of the other form, the route's model name, media at their fields.
 */
import { describe, expect, it } from 'vitest';
import { planClipTask } from '../../contract/clip.js';
import type { MediaRef } from '../../contract/media-refs.js';
import { planModelCenterTask } from '../../contract/model-center.js';
import { planMotionTask } from '../../contract/motion.js';
import { planPicTask } from '../../contract/pic.js';
import { planReelTask } from '../../contract/reel.js';
import type { SubmitPlan } from '../../contract/submit-plan.js';
import { planVideosTask } from '../../contract/videos.js';
import type { ProviderJob } from '../types.js';
import { createBody } from './create-body.js';

const job = (plan: SubmitPlan, upstreamModel = plan.model): ProviderJob => {
  const { amount: _amount, route: _route, traceparent: _traceparent, ...request } = plan;
  return { ...request, taskId: 'task_1', upstreamModel, attempt: 1, generation: 0 };
};

/** The gateway's ctx.mediaUrl: caller URLs as given, assets as signed input URLs. */
const mediaUrl = (ref: MediaRef): string =>
  ref.url.startsWith('assetId://') ? `https://gw.example/inputs/task_1/${ref.url.slice(10)}.png?exp=1&sig=s` : ref.url;
const U = (n: number): string => `https://media.example/${n}.png`;

const any = (body: unknown) => body as never;

describe('create bodies (G95)', () => {
  it.each([
    [
      'pic with everything',
      planPicTask(any({ model: 'pic-2', prompt: 'a fox', resolution: '2k', size: '16:9', image_urls: [U(1), U(2)] })),
      'pic-2',
      { model: 'pic-2', prompt: 'a fox', resolution: '2k', size: '16:9', image_urls: [U(1), U(2)] },
    ],
    ['pic, defaults not written, no empty list', planPicTask(any({ model: 'pic', prompt: 'a fox' })), 'pic', { model: 'pic', prompt: 'a fox' }],
    ['pic under another name upstream', planPicTask(any({ model: 'pic', prompt: 'p' })), 'pic-pro', { model: 'pic-pro', prompt: 'p' }],
    [
      'clip Form A by aspect_ratio: size only, duration 8',
      planClipTask(any({ model: 'clip3.1-fast', prompt: 'p', aspect_ratio: '9:16' })),
      'clip3.1-fast',
      { model: 'clip3.1-fast', prompt: 'p', size: '720x1280', duration: 8 },
    ],
    [
      'clip Form A without model, seconds "8", input_reference',
      planClipTask(any({ prompt: 'p', seconds: '8', input_reference: [U(1), U(2)] })),
      'clip3.1-fast',
      { model: 'clip3.1-fast', prompt: 'p', size: '1280x720', duration: 8, input_reference: [U(1), U(2)] },
    ],
    [
      'clip Form A frames',
      planClipTask(any({ model: 'clip3.1-fast', prompt: 'p', first_image: U(1), last_image: U(2) })),
      'clip3.1-fast',
      { model: 'clip3.1-fast', prompt: 'p', size: '1280x720', duration: 8, first_image: U(1), last_image: U(2) },
    ],
    [
      'clip Form B: aspect_ratio and resolution, no duration, no size',
      planClipTask(any({ model: 'clip_3_1_pro', prompt: 'p', resolution: '4k', image_urls: [U(1)] })),
      'clip_3_1_pro',
      { model: 'clip_3_1_pro', prompt: 'p', aspect_ratio: '16:9', resolution: '4K', image_urls: [U(1)] },
    ],
    [
      'clip Form B frames',
      planClipTask(any({ model: 'clip_3_1_fast_stable', prompt: 'p', aspect_ratio: '9:16', first_image: U(1) })),
      'clip_3_1_fast_stable',
      { model: 'clip_3_1_fast_stable', prompt: 'p', aspect_ratio: '9:16', resolution: '720p', first_image: U(1) },
    ],
    [
      'reel Form A',
      planReelTask(any({ model: 'reel-2', prompt: 'p', aspect_ratio: '16:9', seconds: '15', image_urls: [U(1)] })),
      'reel-2',
      { model: 'reel-2', prompt: 'p', size: '1280x720', duration: 15, image_urls: [U(1)] },
    ],
    [
      'reel Form B defaults',
      planReelTask(any({ model: 'reelOa2Pro', prompt: 'p' })),
      'reelOa2Pro',
      { model: 'reelOa2Pro', prompt: 'p', size: '720x1280', duration: 4 },
    ],
    [
      'motion 1.5 pro image-to-video: role written, audio kept',
      planMotionTask(
        any({
          model: 'motion_1_5_pro_720p',
          content: [
            { type: 'text', text: 'go' },
            { type: 'image_url', image_url: { url: U(1) } },
          ],
        }),
      ),
      'motion_1_5_pro_720p',
      {
        model: 'motion_1_5_pro_720p',
        content: [
          { type: 'text', text: 'go' },
          { type: 'image_url', image_url: { url: U(1) }, role: 'first_frame' },
        ],
        ratio: 'adaptive',
        duration: 5,
        generate_audio: true,
      },
    ],
    [
      'motion 1.5 pro without audio',
      planMotionTask(any({ model: 'motion_1_5_pro_480p', content: [{ type: 'text', text: 'go' }], generate_audio: false, duration: -1 })),
      'motion_1_5_pro_480p',
      { model: 'motion_1_5_pro_480p', content: [{ type: 'text', text: 'go' }], ratio: 'adaptive', duration: -1, generate_audio: false },
    ],
    [
      'motion 2.0 text-to-video, flex: no generate_audio, service_tier flex',
      planMotionTask(any({ model: 'motion_2_0_4s_5s', content: [{ type: 'text', text: 'go' }], service_tier: 'flex' })),
      'motion_2_0_4s_5s',
      { model: 'motion_2_0_4s_5s', content: [{ type: 'text', text: 'go' }], ratio: '16:9', duration: 5, service_tier: 'flex' },
    ],
    [
      'videos defaults, no empty reference lists',
      planVideosTask(any({ model: 'videos', prompt: 'p', duration: '6' })),
      'videos',
      { model: 'videos', prompt: 'p', duration: 6, ratio: '16:9', resolution: '720p' },
    ],
    [
      'videos references',
      planVideosTask(
        any({ model: 'videos_fast', prompt: 'p', duration: 4, ratio: '9:16', referenceImages: [U(1)], referenceVideos: ['https://media.example/v.mp4'] }),
      ),
      'videos_fast',
      {
        model: 'videos_fast',
        prompt: 'p',
        duration: 4,
        ratio: '9:16',
        resolution: '720p',
        referenceImages: [U(1)],
        referenceVideos: ['https://media.example/v.mp4'],
      },
    ],
    [
      'videos frames',
      planVideosTask(any({ model: 'videos', prompt: 'p', duration: 5, image: U(1), lastFrameImage: U(2) })),
      'videos',
      { model: 'videos', prompt: 'p', duration: 5, ratio: '16:9', resolution: '720p', image: U(1), lastFrameImage: U(2) },
    ],
    [
      'Model Center sd model: the table with its defaults, flat',
      planModelCenterTask(any({ model: 'sd_2.0_fast_discount', prompt: 'p', reference_images: [U(1)] })),
      'sd_2.0_fast_discount',
      {
        model: 'sd_2.0_fast_discount',
        prompt: 'p',
        reference_images: [U(1)],
        reference_videos: [],
        reference_audios: [],
        duration: 5,
        aspect_ratio: '16:9',
        resolution: '720p',
        seed: -1,
        first_image: [],
        last_image: [],
        generate_audio: true,
        watermark: false,
      },
    ],
    [
      'Model Center imagegen: every field passed on',
      planModelCenterTask(any({ model: 'imagegen-5.0', prompt: 'p', size: '640x480', style: 'ink' })),
      'imagegen-5.0',
      { model: 'imagegen-5.0', prompt: 'p', size: '640x480', style: 'ink' },
    ],
    [
      'Model Center under another name upstream',
      planModelCenterTask(any({ model: 'vidmodel-H3-768p-c1', prompt: 'p', duration: 3 })),
      'vm-h3',
      { model: 'vm-h3', prompt: 'p', duration: 3 },
    ],
  ])('%s', (_name, plan, upstreamModel, expected) => {
    const body = createBody(job(plan, upstreamModel), mediaUrl);
    expect(body).toStrictEqual(expected);
    expect(Object.keys(body)[0]).toBe('model');
  });

  it('uploaded assets become signed gateway URLs at their fields; caller URLs go as given', () => {
    const cases: Array<[SubmitPlan, Record<string, unknown>]> = [
      [
        planPicTask(any({ model: 'pic', prompt: 'p', image_urls: [U(1), 'assetId://a1'] })),
        { image_urls: [U(1), mediaUrl({ url: 'assetId://a1', field: '' })] },
      ],
      [
        planMotionTask(
          any({
            model: 'motion_2_0_4s_5s',
            content: [
              { type: 'text', text: 'x' },
              { type: 'image_url', image_url: { url: 'assetId://m1' }, role: 'first_frame' },
              { type: 'image_url', image_url: { url: U(2) }, role: 'last_frame' },
            ],
          }),
        ),
        {
          content: [
            { type: 'text', text: 'x' },
            { type: 'image_url', image_url: { url: mediaUrl({ url: 'assetId://m1', field: '' }) }, role: 'first_frame' },
            { type: 'image_url', image_url: { url: U(2) }, role: 'last_frame' },
          ],
        },
      ],
      [
        planClipTask(any({ model: 'clip3.1-fast', prompt: 'p', first_image: 'assetId://f', last_image: 'assetId://l' })),
        { first_image: mediaUrl({ url: 'assetId://f', field: '' }), last_image: mediaUrl({ url: 'assetId://l', field: '' }) },
      ],
      [
        planVideosTask(any({ model: 'videos', prompt: 'p', duration: 5, referenceImages: ['assetId://r'], referenceVideos: ['assetId://v'] })),
        { referenceImages: [mediaUrl({ url: 'assetId://r', field: '' })], referenceVideos: [mediaUrl({ url: 'assetId://v', field: '' })] },
      ],
      [
        planModelCenterTask(any({ model: 'sd_2.5_special_v1', prompt: 'p', first_image: ['assetId://f'] })),
        { first_image: [mediaUrl({ url: 'assetId://f', field: '' })] },
      ],
    ];
    for (const [plan, fields] of cases) {
      const body = createBody(job(plan), mediaUrl);
      expect(body).toMatchObject(fields);
      expect(JSON.stringify(body)).not.toContain('assetId://');
    }
  });

  it('a medium stored under its canonical name (an sd alias) is placed where its URL is', () => {
    const plan = planModelCenterTask(any({ model: 'sd_2.0_mini_special', prompt: 'p', image_urls: ['assetId://a', U(1), 'assetId://a'] }));
    expect(plan.media.images.map((r) => r.field)).toEqual(['image_urls[0]', 'image_urls[1]', 'image_urls[2]']);
    const body = createBody(job(plan), mediaUrl);
    const signed = mediaUrl({ url: 'assetId://a', field: '' });
    expect(body.reference_images).toEqual([signed, U(1), signed]);
    expect(body).not.toHaveProperty('image_urls');
  });

  it('the stored request is left as it was', () => {
    const plan = planPicTask(any({ model: 'pic', prompt: 'p', image_urls: ['assetId://a1'] }));
    const j = job(plan);
    createBody(j, mediaUrl);
    expect(j.params).toHaveProperty('image_urls', ['assetId://a1']);
  });

  it('a medium that is nowhere in the body is an error, not a silent omission', () => {
    const plan = planPicTask(any({ model: 'pic', prompt: 'p' }));
    const j = { ...job(plan), media: { ...plan.media, images: [{ url: 'assetId://lost', field: 'image_urls[0]' }] } };
    expect(() => createBody(j, mediaUrl)).toThrow(/could not place the medium of image_urls\[0\]/);
  });
});
