/**
 * Calls to a ComfyUI server below `baseUrl` (its own routes, not the `/api` aliases): JSON both
 * ways, an image upload as multipart/form-data (`POST /upload/image`: image, subfolder, type,
 * overwrite), and the `/view` URL of an output file. ComfyUI has no authentication of its own; a
 * configured key is sent as `Authorization: Bearer` for a proxy in front of it (and with downloads
 * of its files, which stay at the same origin). Failures below HTTP and timeouts are ChannelErrors
 * (upstream-call.ts); an HTTP answer of any status is returned for errors.ts to classify.
 */
import { randomBytes } from 'node:crypto';
import { UpstreamClient, type UpstreamAnswer } from '../toolkit/upstream-call.js';

/** Largest answer read: `/queue` and `/history` carry whole workflows. */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

export type ComfyAnswer = UpstreamAnswer;

/** An output file as ComfyUI names it. */
export interface ComfyFileRef {
  filename: string;
  subfolder: string;
  type: string;
}

export class ComfyHttp extends UpstreamClient {
  /** Headers every call (and every download of a file) carries. */
  authHeaders(): Record<string, string> {
    return this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {};
  }

  async send(method: 'GET' | 'POST', path: string, body: unknown, signal: AbortSignal, timeoutMs: number): Promise<ComfyAnswer> {
    return this.request(
      path,
      {
        method,
        headers: { accept: 'application/json', ...(body !== undefined && { 'content-type': 'application/json' }), ...this.authHeaders() },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      },
      signal,
      timeoutMs,
      MAX_ANSWER_BYTES,
    );
  }

  /** `POST /upload/image` of one image into ComfyUI's input folder, replacing a file of that name. */
  async uploadImage(
    file: { name: string; contentType: string; data: Buffer },
    subfolder: string,
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<ComfyAnswer> {
    const boundary = `mediagate-${randomBytes(12).toString('hex')}`;
    const field = (name: string, value: string): Buffer => Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="image"; filename="${file.name}"\r\ncontent-type: ${file.contentType}\r\n\r\n`),
      file.data,
      Buffer.from('\r\n'),
      field('subfolder', subfolder),
      field('type', 'input'),
      field('overwrite', 'true'),
      Buffer.from(`--${boundary}--\r\n`),
    ]);
    return this.request(
      '/upload/image',
      {
        method: 'POST',
        headers: { accept: 'application/json', 'content-type': `multipart/form-data; boundary=${boundary}`, ...this.authHeaders() },
        body,
      },
      signal,
      timeoutMs,
      MAX_ANSWER_BYTES,
    );
  }

  /** Where ComfyUI serves an output file: `{baseUrl}/view?filename=&subfolder=&type=`. */
  viewUrl(f: ComfyFileRef): string {
    const base = this.opts.baseUrl;
    const q = new URLSearchParams({ filename: f.filename, subfolder: f.subfolder, type: f.type });
    return `${base.origin}${base.pathname.replace(/\/+$/, '')}/view?${q.toString()}`;
  }
}
