import { call, type HttpOptions } from './http.js';
import type { Account, Asset, AssetDeleted } from './types.js';

type Signal = { signal?: AbortSignal };
const enc = encodeURIComponent;

/**
 * Uploaded media (`{base_url}/v2/model-center/assets`): upload once, use in any number of tasks as
 * `assetId://{id}` (docs/reference/api/media.md#assets). An upload that review rejects is answered,
 * not thrown: check `status` (`reason` says why).
 */
export class AssetsResource {
  constructor(
    private readonly http: HttpOptions,
    private readonly url: () => string,
  ) {}

  /**
   * Uploads a file (a `Blob`, e.g. `await fs.openAsBlob('cat.png')` in Node) as the multipart
   * field `file`. The per-request timeout covers the whole upload: raise `timeoutMs` for a large
   * file on a slow link.
   */
  upload(file: Blob, options: Signal & { filename?: string } = {}): Promise<Asset> {
    const form = new FormData();
    form.append('file', file, options.filename ?? (file instanceof File ? file.name : 'upload'));
    return call<Asset>(this.http, this.url(), { method: 'POST', form, ...(options.signal && { signal: options.signal }) });
  }

  /** Has the gateway fetch a public http(s) URL and keep it as an asset (`{"url": ...}`). */
  fromUrl(url: string, options: Signal = {}): Promise<Asset> {
    return call<Asset>(this.http, this.url(), { method: 'POST', body: { url }, ...options });
  }

  get(id: string, options: Signal = {}): Promise<Asset> {
    return call<Asset>(this.http, `${this.url()}/${enc(id)}`, options);
  }

  /** Removes the asset and its file at once; tasks that used it keep their own copy. */
  delete(id: string, options: Signal = {}): Promise<AssetDeleted> {
    return call<AssetDeleted>(this.http, `${this.url()}/${enc(id)}`, { method: 'DELETE', ...options });
  }
}

/** `GET {base_url}/v1/account`: the calling key's account, its credits and spending per model. */
export class AccountResource {
  constructor(
    private readonly http: HttpOptions,
    private readonly url: () => string,
  ) {}

  /** `days`: the usage period, the last 1 to 366 days (default 30). */
  get(params: { days?: number } = {}, options: Signal = {}): Promise<Account> {
    return call<Account>(this.http, `${this.url()}${params.days === undefined ? '' : `?days=${params.days}`}`, options);
  }
}
