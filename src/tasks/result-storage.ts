/**
 * Storing what a provider made as the task's result (G88). Files made here are moved
 * into the result store. Files at an upstream are downloaded at once, streamed to disk, bounded in
 * size and time, checked to be what was asked (the first bytes, then a probe: pixel size,
 * duration), and moved in (a file an upstream answered inline, as a `data:` URL, is written out and
 * checked the same way); callers only ever get the gateway's own signed URLs, and the upstream's
 * URLs stay on the task (`result.sourceUrls`; a data: URL by its media type only). Each attempt stores its files under names of its
 * own, so a late worker can never overwrite the result of the one that completed the task.
 */
import fs from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { AppError } from '../errors.js';
import type { BlobStore } from '../media/blob-store.js';
import { MEDIA_FORMATS } from '../media/formats.js';
import { probeFile, ProbeError } from '../media/probe.js';
import type { MediaKind } from '../media/media-facts.js';
import { decodeDataUrl, DataUrlError, dataUrlLabel, isDataUrl } from '../media/data-url.js';
import { AddressNotAllowed, fetchMediaToFile, HttpStatusError, SNIFF_BYTES } from '../media/safe-fetch.js';
import { looksLike } from '../media/sniff.js';
import { UnrecoverableError, type LocalFile, type ProviderOutput, type RemoteFile } from '../providers/types.js';
import type { ResultFile, TaskResult } from '../store/types.js';

/** The upstream no longer has the file (404, 410): a new generation may make it again. */
export class RemoteFileGone extends Error {
  constructor(readonly status: number) {
    super(`the upstream no longer has the result file (HTTP ${status})`);
    this.name = 'RemoteFileGone';
  }
}

export interface StoredOutput {
  result: TaskResult;
  /** Removes the stored files again (the task was no longer this worker's to complete). */
  discard(): Promise<void>;
}

export interface ResultStorageOptions {
  blobs: BlobStore;
  /** Where downloads are written before they are checked and moved in. */
  tmpDir: string;
  /** MEDIAGATE_ALLOW_PRIVATE_URLS: result URLs may name private addresses too. */
  allowPrivate: boolean;
  /** Largest result file per kind, bytes. */
  maxBytes?: Partial<Record<MediaKind, number>>;
  /** Bound on one download, ms. */
  timeoutMs?: number;
}

const DEFAULT_MAX_BYTES: Record<MediaKind, number> = { image: 100 * 1_048_576, video: 2048 * 1_048_576, audio: 200 * 1_048_576 };
const DEFAULT_TIMEOUT_MS = 10 * 60_000;

/** `video.mp4` -> `video.<token>.mp4`. */
export function attemptFileName(name: string, token: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? `${name.slice(0, dot)}.${token}${name.slice(dot)}` : `${name}.${token}`;
}

/** A result URL the address rule refused, as the task's error: what was refused, never the address itself. */
function refusedResultUrl(err: AppError): UnrecoverableError {
  const refused = err.cause instanceof AddressNotAllowed ? err.cause : undefined;
  const why =
    refused === undefined
      ? 'it is not an http or https URL (or redirects to one that is not)'
      : `${refused.redirected ? 'it redirects to' : 'it is at'} ${/^[aeiou]/.test(refused.addressClass) ? 'an' : 'a'} ${refused.addressClass} address`;
  return new UnrecoverableError(
    `the upstream's result URL is not allowed: ${why}; result files are fetched only from public addresses and from the provider's own configured address`,
    { cause: err },
  );
}

const isRemote = (f: LocalFile | RemoteFile): f is RemoteFile => 'url' in f;
const whatOf = (kind: MediaKind): string => (kind === 'image' ? 'an image' : `a ${kind}`);

export class ResultStorage {
  constructor(private readonly opts: ResultStorageOptions) {}

  /** Stores every file of `output` under `taskId`; on any failure, none stays. */
  async store(taskId: string, output: ProviderOutput, signal: AbortSignal): Promise<StoredOutput> {
    const token = randomBytes(4).toString('hex');
    const files: ResultFile[] = [];
    const sourceUrls: string[] = [];
    const discard = async (): Promise<void> => {
      for (const f of files) await this.opts.blobs.remove(taskId, f.name);
    };
    try {
      for (const f of output.files) {
        if (isRemote(f)) {
          files.push(await this.download(taskId, f, token, files.length, signal));
          // a data: URL is recorded by its media type only (its bytes are the file)
          sourceUrls.push(isDataUrl(f.url) ? dataUrlLabel(f.url) : f.url);
        } else {
          const name = attemptFileName(f.name, token);
          const bytes = await this.opts.blobs.put(taskId, name, 'data' in f ? { data: f.data } : { path: f.path }, { contentType: f.contentType });
          files.push({
            name,
            contentType: f.contentType,
            bytes,
            ...(f.width !== undefined && { width: f.width }),
            ...(f.height !== undefined && { height: f.height }),
            ...(f.duration !== undefined && { duration: f.duration }),
          });
        }
      }
    } catch (err) {
      await discard();
      throw err;
    }
    const probed = files.find((f) => f.duration !== undefined && f.contentType.startsWith('video/'))?.duration;
    const actualDuration = output.actualDuration ?? probed;
    return {
      result: { files, ...(actualDuration !== undefined && { actualDuration }), ...(sourceUrls.length > 0 && { sourceUrls }) },
      discard,
    };
  }

  /** Fetches a result file at an upstream's URL into the temporary folder (bounded, checked by its first bytes). */
  private async fetchRemote(file: RemoteFile, maxBytes: number, signal: AbortSignal): Promise<{ path: string }> {
    const what = whatOf(file.kind);
    try {
      return await fetchMediaToFile(file.url, {
        // trust is per origin and per hop (G270): the provider's own origin may be private, a redirect off it may not
        field: 'result',
        maxBytes,
        allowPrivate: this.opts.allowPrivate,
        ...(file.trusted === true && { trustedOrigins: [new URL(file.url).origin] }),
        accept: (_type, first) => looksLike(file.kind, first),
        signal,
        dir: this.opts.tmpDir,
        timeoutMs: this.opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        ...(file.headers && { headers: file.headers }),
      });
    } catch (err) {
      if (signal.aborted) throw err;
      const status = err instanceof AppError && err.cause instanceof HttpStatusError ? err.cause.status : undefined;
      if (status === 404 || status === 410) throw new RemoteFileGone(status);
      // asking again gets the same URL: the task fails at once, naming no address (G271)
      if (err instanceof AppError && err.code === 'url_not_allowed') throw refusedResultUrl(err);
      if (err instanceof AppError && /is not an accepted kind of file/.test(err.message)) {
        throw new UnrecoverableError(`the upstream's result is not ${what} (its first bytes say otherwise)`, { cause: err });
      }
      if (err instanceof AppError && /is too large/.test(err.message)) {
        throw new UnrecoverableError(`the upstream's result is larger than ${maxBytes} bytes, the most the gateway keeps of ${what}`, { cause: err });
      }
      // the URL stays out of the message (it may carry a signature); the log has the cause
      throw new Error(`could not fetch the upstream's result file${status ? ` (HTTP ${status})` : ''}`, { cause: err });
    }
  }

  /** Writes out a result file an upstream answered inline as a data: URL (bounded, checked by its first bytes as a download is). */
  private async writeDataUrl(file: RemoteFile, maxBytes: number): Promise<{ path: string }> {
    const what = whatOf(file.kind);
    let bytes: Buffer;
    try {
      bytes = decodeDataUrl(file.url, maxBytes).bytes;
    } catch (err) {
      if (err instanceof DataUrlError && err.tooLarge) {
        throw new UnrecoverableError(`the upstream's result is larger than ${maxBytes} bytes, the most the gateway keeps of ${what}`, { cause: err });
      }
      throw new UnrecoverableError(`the upstream's result ${(err as Error).message}`, { cause: err });
    }
    if (!looksLike(file.kind, bytes.subarray(0, SNIFF_BYTES)))
      throw new UnrecoverableError(`the upstream's result is not ${what} (its first bytes say otherwise)`);
    const path = join(this.opts.tmpDir, `inline-${randomBytes(8).toString('hex')}.part`);
    try {
      await fs.promises.writeFile(path, bytes, { flag: 'wx' });
    } catch (err) {
      await fs.promises.rm(path, { force: true });
      throw err;
    }
    return { path };
  }

  /** Downloads one remote file (or writes out one answered inline), checks it is what was asked, and moves it in as `<kind>[-n].<token>.<ext>`. */
  private async download(taskId: string, file: RemoteFile, token: string, index: number, signal: AbortSignal): Promise<ResultFile> {
    const maxBytes = this.opts.maxBytes?.[file.kind] ?? DEFAULT_MAX_BYTES[file.kind];
    const fetched = isDataUrl(file.url) ? await this.writeDataUrl(file, maxBytes) : await this.fetchRemote(file, maxBytes, signal);
    try {
      const facts = await probeFile(fetched.path, file.kind, { signal, tmpDir: this.opts.tmpDir });
      const format = MEDIA_FORMATS[facts.format];
      if (!format) throw new ProbeError(`is a ${facts.format} file, which the gateway does not serve`);
      const name = `${file.kind}${index > 0 ? `-${index}` : ''}.${token}.${format.ext}`;
      const bytes = await this.opts.blobs.put(taskId, name, { path: fetched.path }, { contentType: format.contentType });
      return {
        name,
        contentType: format.contentType,
        bytes,
        ...(facts.width !== undefined && { width: facts.width }),
        ...(facts.height !== undefined && { height: facts.height }),
        ...(facts.duration !== undefined && { duration: facts.duration }),
      };
    } catch (err) {
      if (err instanceof ProbeError) throw new UnrecoverableError(`the upstream's result ${err.message}`, { cause: err });
      throw err;
    } finally {
      await fs.promises.rm(fetched.path, { force: true });
    }
  }
}
