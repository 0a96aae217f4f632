/**
 * Reading upstream answers (G96) and where calls go (G94), from the interface's Endpoints table.
 */
import { describe, expect, it } from 'vitest';
import type { FamilyForm, FamilyId } from '../../contract/families.js';
import { familyRequestOf } from '../../contract/family-request.js';
import { mediaRefs } from '../../contract/media-refs.js';
import type { OutputSpec } from '../../contract/output.js';
import { ChannelError, UnexpectedReply, UnrecoverableError, type ProviderJob } from '../types.js';
import { scrubberFor } from '../toolkit/errors.js';
import { cancelEndpoint, createEndpoint, parseBase, queryEndpoint, target } from './paths.js';
import { checkResultOf, createdOf, parseJson } from './replies.js';

const scrub = scrubberFor('k-123456789', [new URL('http://up.internal:9000')]);
const video: OutputSpec = { kind: 'video', width: 1280, height: 720, durationSec: 8, fps: 24, audio: false };
const image: OutputSpec = { kind: 'image', width: 1024, height: 1024, format: 'png' };
const job = (family: FamilyId, output: OutputSpec = video): ProviderJob => ({
  ...familyRequestOf(family, null, {}),
  taskId: 't',
  model: 'm',
  upstreamModel: 'm',
  output,
  media: mediaRefs(),
  attempt: 1,
  generation: 0,
});
const reading = (family: FamilyId, output?: OutputSpec) => ({
  relayId: 'up',
  job: job(family, output),
  trusted: (u: string) => u.startsWith('http://up.internal:9000/'),
  scrub,
});

describe('endpoints (docs/reference/api/README.md#endpoints)', () => {
  it.each<[FamilyId, FamilyForm, string, string, string, string]>([
    ['pic', null, 'base', '/v1/pic/images', 'base', '/v1/result/ID'],
    ['clip', 'A', 'api', '/clip/videos', 'power', '/v1/result/ID'],
    ['clip', 'B', 'base', '/clip/videos', 'base', '/v1/result/ID'],
    ['reel', 'A', 'api', '/reel/videos', 'api', '/v1/videos/ID'],
    ['reel', 'B', 'base', '/reel/videos', 'api', '/v1/videos/ID'],
    ['motion', null, 'power', '/v1/motion/videos', 'power', '/v1/result/ID'],
    ['videos', null, 'base', '/v1/videos/videos', 'base', '/v1/result/ID'],
    ['model-center', null, 'base', '/v2/model-center/tasks', 'base', '/v2/model-center/tasks/ID'],
  ])('%s Form %s: create at {%s}%s, query at {%s}%s', (family, form, createBase, createPath, queryBase, queryPath) => {
    expect(createEndpoint(family, form)).toEqual({ base: createBase, path: createPath });
    expect(queryEndpoint(family, form, 'ID')).toEqual({ base: queryBase, path: queryPath });
  });

  it('cancel is for motion only; ids are escaped in paths', () => {
    expect(cancelEndpoint('motion', 'a/b c')).toEqual({ base: 'power', path: '/v1/motion/videos/a%2Fb%20c/cancel' });
    expect(cancelEndpoint('pic', 'x')).toBeUndefined();
    expect(queryEndpoint('pic', null, 'a/b')).toEqual({ base: 'base', path: '/v1/result/a%2Fb' });
  });

  it('prefixes keep their path; a trailing slash is dropped', () => {
    const bases = {
      base: parseBase('baseUrl', 'https://api.example.com/'),
      power: parseBase('powerBaseUrl', 'https://api.example.com/power/'),
      api: parseBase('apiBaseUrl', 'https://other.example.com/x/y'),
    };
    expect(target(bases, createEndpoint('pic', null))).toEqual({ origin: 'https://api.example.com', path: '/v1/pic/images' });
    expect(target(bases, createEndpoint('motion', null))).toEqual({ origin: 'https://api.example.com', path: '/power/v1/motion/videos' });
    expect(target(bases, createEndpoint('clip', 'A'))).toEqual({ origin: 'https://other.example.com', path: '/x/y/clip/videos' });
  });

  it.each(['ftp://a.example', 'not a url', 'https://user:pw@a.example', 'https://a.example/?q=1', 'https://a.example/#f'])(
    '%s is refused as a prefix, without quoting it',
    (value) => {
      expect(() => parseBase('baseUrl', value)).toThrow(/^baseUrl must/);
      try {
        parseBase('baseUrl', value);
      } catch (err) {
        expect((err as Error).message).not.toContain('pw');
      }
    },
  );
});

describe('create answers', () => {
  it('the id of a task object, with its progress', () => {
    expect(createdOf('up', 'pic', { id: 'task_abc', status: 'queued', progress: 0 }, {}, scrub)).toEqual({ upstreamId: 'task_abc', progress: 0 });
    expect(createdOf('up', 'model-center', { id: 'mc1', status: 'queued' }, {}, scrub)).toEqual({ upstreamId: 'mc1' });
  });
  it('videos: data.projectId of a code "0" envelope', () => {
    expect(createdOf('up', 'videos', { code: '0', msg: null, data: { projectId: 'p1' } }, {}, scrub)).toEqual({ upstreamId: 'p1' });
  });
  it('videos: a non-zero code is a refusal even with a 2xx status', () => {
    expect(() => createdOf('up', 'videos', { code: '400', msg: 'prompt is too long', data: null }, {}, scrub)).toThrow(UnrecoverableError);
    expect(() => createdOf('up', 'videos', { code: '503', msg: 'busy', data: null }, {}, scrub)).toThrow(ChannelError);
  });
  it.each([
    ['pic', { status: 'queued' }],
    ['pic', { id: '' }],
    ['pic', { id: 42 }],
    ['pic', { id: 'has space' }],
    ['videos', { code: '0', data: null }],
    ['videos', { id: 'x' }],
  ] as Array<[FamilyId, Record<string, unknown>]>)("%s %j: no usable id is a reply problem of this task, not the channel's fault (G272)", (family, json) => {
    expect(() => createdOf('up', family, json, {}, scrub)).toThrow(UnexpectedReply);
  });
  it.each(['not json', '[1]', 'null', '"x"'])('%s is malformed', (text) => {
    expect(() => parseJson('up', text)).toThrow(UnexpectedReply);
  });
});

describe('status answers', () => {
  it("queued and processing are pending with the upstream's progress and Retry-After", () => {
    expect(checkResultOf({ status: 'queued', progress: 0 }, {}, reading('pic', image))).toEqual({ state: 'pending', progress: 0 });
    expect(checkResultOf({ status: 'processing', progress: 42.5 }, { 'retry-after': '9' }, reading('motion'))).toEqual({
      state: 'pending',
      progress: 42.5,
      retryAfterMs: 9000,
    });
    expect(checkResultOf({ status: 'processing' }, {}, reading('clip'))).toEqual({ state: 'pending' });
    expect(checkResultOf({ status: 'processing', progress: 250 }, {}, reading('clip'))).toEqual({ state: 'pending', progress: 100 });
    expect(checkResultOf({ status: 'processing', progress: '50' }, {}, reading('clip'))).toEqual({ state: 'pending' });
  });

  it.each<[FamilyId, OutputSpec, Record<string, unknown>, string]>([
    ['pic', image, { image_url: 'http://up.internal:9000/files/a.png' }, 'http://up.internal:9000/files/a.png'],
    ['clip', video, { video_url: 'https://cdn.example/v.mp4' }, 'https://cdn.example/v.mp4'],
    ['reel', video, { video_url: 'https://cdn.example/r.mp4' }, 'https://cdn.example/r.mp4'],
    ['motion', video, { video_url: 'https://cdn.example/m.mp4' }, 'https://cdn.example/m.mp4'],
    ['videos', video, { video_url: 'https://cdn.example/x.mp4' }, 'https://cdn.example/x.mp4'],
    ['model-center', video, { result_url: 'https://cdn.example/mc.mp4', video_url: 'https://cdn.example/other.mp4' }, 'https://cdn.example/mc.mp4'],
    ['model-center', image, { result_url: null, image_url: 'https://cdn.example/i.png' }, 'https://cdn.example/i.png'],
  ])("%s completed: the result file of the family's field, of the kind asked", (family, output, fields, url) => {
    const r = checkResultOf({ status: 'completed', progress: 100, ...fields }, {}, reading(family, output));
    expect(r).toEqual({ state: 'completed', output: { files: [{ url, kind: output.kind, ...(url.startsWith('http://up.internal') && { trusted: true }) }] } });
  });

  it('actualDuration is passed on where given', () => {
    const r = checkResultOf({ status: 'completed', video_url: 'https://cdn.example/v.mp4', actualDuration: 8.04 }, {}, reading('clip'));
    expect(r).toMatchObject({ state: 'completed', output: { actualDuration: 8.04 } });
    const none = checkResultOf({ status: 'completed', video_url: 'https://cdn.example/v.mp4', actualDuration: null }, {}, reading('clip'));
    expect(none.state === 'completed' && none.output.actualDuration).toBeUndefined();
  });

  it('a result URL elsewhere is not trusted; no credentials go with any download', () => {
    const r = checkResultOf({ status: 'completed', image_url: 'http://up.internal:9001/a.png' }, {}, reading('pic', image));
    expect(r.state === 'completed' && r.output.files[0]).toEqual({ url: 'http://up.internal:9001/a.png', kind: 'image' });
  });

  it.each([
    [{ status: 'completed', video_url: null }],
    [{ status: 'completed', video_url: 'not a url' }],
    [{ status: 'completed', video_url: 'ftp://x/y.mp4' }],
    [{ status: 'completed', image_url: 'https://x/y.png' }],
    [{ status: 'weird' }],
    [{}],
  ])("%j is a reply problem of this task, not the channel's fault (G272)", (json) => {
    expect(() => checkResultOf(json, {}, reading('clip'))).toThrow(UnexpectedReply);
  });

  it("failed: a failed generation with the upstream's reason (scrubbed); not unrecoverable", () => {
    const r = checkResultOf({ status: 'failed', error: 'render crashed at http://up.internal:9000/x' }, {}, reading('pic', image));
    expect(r.state).toBe('failed');
    const err = (r as { error: Error }).error;
    expect(err).not.toBeInstanceOf(UnrecoverableError);
    expect(err.message).toBe('the relay upstream "up" reported: render crashed at [upstream]/x');
  });

  it('cancelled at the upstream by someone else: a failed generation', () => {
    const r = checkResultOf({ status: 'cancelled' }, {}, reading('motion'));
    expect(r.state === 'failed' && r.error.message).toMatch(/cancelled the generation/);
  });
});
