/**
 * The admin API in tests: a harness with a bootstrap admin key and the `{base_url}`,
 * `{power_base_url}` and `{api_base_url}` prefixes apart (so every create path is its own), calls
 * with either key, and the table of every create call of the public API.
 */
import type { Harness, HarnessOptions } from './harness.js';

export const ADMIN_KEY = 'admin-test-key-0123456789abcdef';

export interface AdminHarness extends Harness {
  adminAuth: Record<string, string>;
  /** An admin API call with the admin key (or `key`): status, JSON body, headers. */
  admin(method: string, url: string, payload?: unknown, key?: string): Promise<{ status: number; json: Record<string, any>; headers: Record<string, unknown> }>;
  /** Creates a caller key through the admin API; answers its record and secret. */
  newKey(body?: Record<string, unknown>): Promise<{ id: string; secret: string; record: Record<string, any> }>;
}

/**
 * The harness options of an admin test: a bootstrap admin key, the three prefixes apart. Tests call
 * `withAdmin(await createHarness(adminOptions()))`, so vitest.config.ts finds them as gateway
 * suites (run on PostgreSQL too).
 */
export function adminOptions(options: HarnessOptions = {}): HarnessOptions {
  return {
    workers: false,
    reviewMedia: false,
    ...options,
    env: { MEDIAGATE_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY, MEDIAGATE_API_PREFIX: '/api', MEDIAGATE_POWER_PREFIX: '/power', ...options.env },
  };
}

export function withAdmin(h: Harness): AdminHarness {
  const admin: AdminHarness['admin'] = async (method, url, payload, key = ADMIN_KEY) => {
    const res = await h.app.inject({
      method: method as 'GET',
      url,
      headers: { authorization: `Bearer ${key}` },
      ...(payload !== undefined && { payload: payload as Record<string, unknown> }),
    });
    return { status: res.statusCode, json: res.body === '' ? {} : res.json(), headers: res.headers };
  };
  return Object.assign(h, {
    adminAuth: { authorization: `Bearer ${ADMIN_KEY}` },
    admin,
    newKey: async (body: Record<string, unknown> = {}) => {
      const r = await admin('POST', '/admin/v1/keys', { name: 'test key', ...body });
      if (r.status !== 200) throw new Error(`creating a key: ${r.status} ${JSON.stringify(r.json)}`);
      return { id: r.json.id as string, secret: r.json.key as string, record: r.json };
    },
  });
}

export type ErrorStyle = 'standard' | 'videos-create' | 'chat';

export interface CreateCall {
  path: string;
  family: string;
  /** The model the call creates with (the task's model). */
  model: string;
  body: Record<string, unknown>;
  style: ErrorStyle;
}

/** Every create call of the public API (with the prefixes of {@link createAdminHarness}), each a valid body. */
export const CREATE_CALLS: readonly CreateCall[] = [
  { path: '/v1/pic/images', family: 'pic', model: 'pic-2', body: { model: 'pic-2', prompt: 'a lighthouse' }, style: 'standard' },
  { path: '/api/clip/videos', family: 'clip', model: 'clip3.1-fast', body: { prompt: 'waves' }, style: 'standard' },
  { path: '/clip/videos', family: 'clip', model: 'clip_3_1_fast', body: { model: 'clip_3_1_fast', prompt: 'waves' }, style: 'standard' },
  { path: '/api/reel/videos', family: 'reel', model: 'reel-2', body: { model: 'reel-2', prompt: 'a reel' }, style: 'standard' },
  { path: '/reel/videos', family: 'reel', model: 'reelOa2Plus', body: { model: 'reelOa2Plus', prompt: 'a reel', duration: 4 }, style: 'standard' },
  { path: '/v1/reel/videos', family: 'reel', model: 'reelOa2Plus', body: { model: 'reelOa2Plus', prompt: 'a reel', duration: 4 }, style: 'standard' },
  {
    path: '/power/v1/motion/videos',
    family: 'motion',
    model: 'motion_2_0_4s_5s',
    body: { model: 'motion_2_0_4s_5s', content: [{ type: 'text', text: 'a dance' }], duration: 1 },
    style: 'standard',
  },
  { path: '/v1/videos/videos', family: 'videos', model: 'videos_fast', body: { model: 'videos_fast', prompt: 'a film', duration: 4 }, style: 'videos-create' },
  {
    path: '/v2/model-center/tasks',
    family: 'model-center',
    model: 'sd_2.0_fast_discount',
    body: { model: 'sd_2.0_fast_discount', prompt: 'a scene', duration: 4, resolution: '480p', generate_audio: false },
    style: 'standard',
  },
  {
    path: '/v1/chat/completions',
    family: 'chat',
    model: 'chat-2.5-flash',
    body: { model: 'chat-2.5-flash', messages: [{ role: 'user', content: 'hello' }] },
    style: 'chat',
  },
];

/** The error code of an answer in any family's body: the standard body's `code`, else the catalog code header (G312). */
export function errorCodeOf(res: { json: Record<string, any>; headers: Record<string, unknown> }): string | undefined {
  return (res.json.error?.code as string | undefined) ?? (res.headers['x-error-code'] as string | undefined);
}

/** Whether `json` is the error body of `style` for `status` (D9). */
export function isErrorBody(style: ErrorStyle, status: number, json: Record<string, any>): boolean {
  switch (style) {
    case 'standard':
      return typeof json.error?.message === 'string' && typeof json.error?.code === 'string';
    case 'videos-create':
      return json.code === String(status) && typeof json.msg === 'string' && json.data === null && !('success' in json);
    case 'chat':
      return json.code === String(status) && typeof json.msg === 'string' && json.data === null && json.success === false;
  }
}
