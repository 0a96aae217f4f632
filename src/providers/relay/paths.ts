/**
 * Where each family's calls go at an upstream that speaks the interface (docs/reference/api/README.md#endpoints;
 * G94): the prefix (`{base_url}`, `{power_base_url}`, `{api_base_url}`) and the path,
 * by family and form. One table per call, keyed by family, so a new family is a compile error here.
 */
import type { FamilyForm, FamilyId } from '../../contract/families.js';

/** Which configured prefix a call goes to: `baseUrl`, `powerBaseUrl` or `apiBaseUrl`. */
export type BaseName = 'base' | 'power' | 'api';

export interface Endpoint {
  base: BaseName;
  /** Path below the prefix, starting with `/`. */
  path: string;
}

type Pick = (form: FamilyForm) => Endpoint;

/** Endpoints 1, 4, 6, 8, 10, 12 (the Form A pages of clip and reel are under `{api_base_url}`). */
const CREATE: Record<FamilyId, Pick> = {
  pic: () => ({ base: 'base', path: '/v1/pic/images' }),
  clip: (form) => (form === 'B' ? { base: 'base', path: '/clip/videos' } : { base: 'api', path: '/clip/videos' }),
  reel: (form) => (form === 'B' ? { base: 'base', path: '/reel/videos' } : { base: 'api', path: '/reel/videos' }),
  motion: () => ({ base: 'power', path: '/v1/motion/videos' }),
  videos: () => ({ base: 'base', path: '/v1/videos/videos' }),
  'model-center': () => ({ base: 'base', path: '/v2/model-center/tasks' }),
};

type PickQuery = (form: FamilyForm, id: string) => Endpoint;
const result = (base: BaseName, id: string): Endpoint => ({ base, path: `/v1/result/${encodeURIComponent(id)}` });

/** Endpoints 2, 5, 7, 9, 11, 13 (clip Form A is queried under `{power_base_url}`, reel under `{api_base_url}`). */
const QUERY: Record<FamilyId, PickQuery> = {
  pic: (_form, id) => result('base', id),
  clip: (form, id) => result(form === 'B' ? 'base' : 'power', id),
  reel: (_form, id) => ({ base: 'api', path: `/v1/videos/${encodeURIComponent(id)}` }),
  motion: (_form, id) => result('power', id),
  videos: (_form, id) => result('base', id),
  'model-center': (_form, id) => ({ base: 'base', path: `/v2/model-center/tasks/${encodeURIComponent(id)}` }),
};

export function createEndpoint(family: FamilyId, form: FamilyForm): Endpoint {
  return CREATE[family](form);
}

export function queryEndpoint(family: FamilyId, form: FamilyForm, upstreamId: string): Endpoint {
  return QUERY[family](form, upstreamId);
}

/** Only motion tasks can be cancelled (D23): `POST {power_base_url}/v1/motion/videos/{id}/cancel`. */
export function cancelEndpoint(family: FamilyId, upstreamId: string): Endpoint | undefined {
  return family === 'motion' ? { base: 'power', path: `/v1/motion/videos/${encodeURIComponent(upstreamId)}/cancel` } : undefined;
}

/** The parsed prefixes of a relay: origin and path prefix of each. */
export interface Bases {
  base: URL;
  power: URL;
  api: URL;
}

/** A configured prefix as a URL (http or https, no credentials, query or fragment); throws naming the setting. */
export function parseBase(setting: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${setting} must be an absolute http(s) URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${setting} must be an http(s) URL`);
  if (url.username || url.password) throw new Error(`${setting} must not carry credentials (use apiKey)`);
  if (url.search || url.hash) throw new Error(`${setting} must not have a query or fragment`);
  url.pathname = url.pathname.replace(/\/+$/, '');
  return url;
}

/** The origin and the full path of an endpoint under the configured prefixes. */
export function target(bases: Bases, endpoint: Endpoint): { origin: string; path: string } {
  const base = bases[endpoint.base];
  return { origin: base.origin, path: `${base.pathname === '/' ? '' : base.pathname}${endpoint.path}` };
}
