import { AccountResource, AssetsResource } from './assets.js';
import { ChatResource } from './chat.js';
import { checkGatewayUrl, type FetchLike, type HttpOptions } from './http.js';
import { familyResources, TasksResource, type Urls, WebhooksResource } from './resources.js';

export interface MediagateOptions {
  /** `{base_url}`: the gateway's public URL, e.g. `https://media.example.com`. */
  baseUrl: string;
  apiKey: string;
  /** `{power_base_url}` (motion); default `baseUrl`. */
  powerBaseUrl?: string;
  /** `{api_base_url}`; default `baseUrl`. */
  apiBaseUrl?: string;
  /** Default: the global `fetch`. */
  fetch?: FetchLike;
  /** Per request, ms (long-polls get their wait on top); default 60 000; 0: none. */
  timeoutMs?: number;
}

const trim = (url: string): string => url.replace(/\/+$/, '');

/** A client of one gateway with one API key. */
export class Mediagate {
  readonly pic;
  readonly clip;
  readonly reel;
  readonly motion;
  readonly videos;
  readonly modelCenter;
  readonly tasks: TasksResource;
  readonly chat: ChatResource;
  readonly webhooks: WebhooksResource;
  readonly assets: AssetsResource;
  readonly account: AccountResource;

  constructor(options: MediagateOptions) {
    if (!options.baseUrl) throw new TypeError('Mediagate: baseUrl is required');
    if (!options.apiKey) throw new TypeError('Mediagate: apiKey is required');
    // not echoed: fetch's own error for such a header value would print the whole key
    if (!/^[\x21-\x7e]+$/.test(options.apiKey.trim())) throw new TypeError('Mediagate: apiKey holds spaces, line breaks or other characters no API key has');
    for (const option of ['baseUrl', 'powerBaseUrl', 'apiBaseUrl'] as const) {
      const value = options[option];
      if (value !== undefined) checkGatewayUrl('Mediagate', option, value);
    }
    const urls: Urls = {
      base: trim(options.baseUrl),
      power: trim(options.powerBaseUrl ?? options.baseUrl),
      api: trim(options.apiBaseUrl ?? options.baseUrl),
    };
    const fetchFn = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    const http: HttpOptions = { apiKey: options.apiKey, fetch: fetchFn, timeoutMs: options.timeoutMs ?? 60_000 };
    const families = familyResources(http, () => urls);
    this.pic = families.pic;
    this.clip = families.clip;
    this.reel = families.reel;
    this.motion = families.motion;
    this.videos = families.videos;
    this.modelCenter = families.modelCenter;
    this.tasks = new TasksResource(http, () => urls);
    this.webhooks = new WebhooksResource(http, () => urls);
    this.chat = new ChatResource(http, () => `${urls.base}/v1/chat/completions`);
    this.assets = new AssetsResource(http, () => `${urls.base}/v2/model-center/assets`);
    this.account = new AccountResource(http, () => `${urls.base}/v1/account`);
  }
}

export * from './errors.js';
export { StreamError } from './chat.js';
export { AccountResource, AssetsResource } from './assets.js';
export { sseData } from './sse.js';
export { POLL_INTERVAL_MS, type RequestOptions } from './resources.js';
export type { WaitOptions } from './wait.js';
export type { FetchLike } from './http.js';
export { verifyWebhook, WebhookVerificationError, type WebhookHeaders, type VerifyOptions } from './webhooks.js';
export type * from './types.js';
export { AdminClient, AdminKeys, AdminAccounts, AdminAudit, AdminTasks, AdminChannels, type AdminClientOptions } from './admin.js';
export type * from './admin-types.js';
