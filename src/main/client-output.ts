import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import {
  ConnectionError,
  MediagateError,
  StreamError,
  TaskCancelledError,
  TaskFailedError,
  TimeoutError,
  type AnyTask,
  type StandardErrorBody,
} from '../../packages/client/dist/index.js';
import { UsageError } from './cli-args.js';

/** Exit codes of the client commands (G238, G315). */
export const EXIT = { ok: 0, failed: 1, usage: 2, cancelled: 3, api: 4, server: 5, timeout: 6, keyExpired: 7, notAllowed: 8 } as const;

/** What to do about a refusal of the key itself (G315): its exit code and a hint after the gateway's message. */
const KEY_REFUSALS: Record<string, { exit: number; hint: string }> = {
  key_expired: { exit: EXIT.keyExpired, hint: "the API key has expired: ask the gateway's operator for a later expiry or a new key" },
  model_not_allowed: { exit: EXIT.notAllowed, hint: 'this API key may not use that model: choose one it may use, or ask the operator to allow it' },
  caller_only: { exit: EXIT.notAllowed, hint: 'this is an admin key: generate and tasks need a caller key (MEDIAGATE_API_KEY)' },
};

/** A task's progress, as it changes: a bar redrawn in place on a terminal, else a line per change. */
export interface Progress {
  update(task: AnyTask): void;
  /** Clears the bar (a terminal); nothing for plain lines. */
  end(): void;
  /** Plain lines (not a terminal): the final status has been printed already. */
  plain: boolean;
}

const BAR = 24;

export function progressFor(out: NodeJS.WriteStream, quiet: boolean): Progress {
  if (quiet) return { update: () => undefined, end: () => undefined, plain: false };
  if (!out.isTTY) {
    return {
      update: (t) => {
        out.write(t.status === 'processing' ? `processing ${t.progress}%\n` : `${t.status}\n`);
      },
      end: () => undefined,
      plain: true,
    };
  }
  let drawn = false;
  return {
    update: (t) => {
      const filled = Math.round((Math.max(0, Math.min(100, t.progress)) / 100) * BAR);
      out.write(`\r${t.status.padEnd(10)} [${'#'.repeat(filled)}${'.'.repeat(BAR - filled)}] ${String(t.progress).padStart(3)}%\x1b[K`);
      drawn = true;
    },
    end: () => {
      if (drawn) out.write('\r\x1b[K');
      drawn = false;
    },
    plain: false,
  };
}

/** The result URL of a completed task, whatever its family. */
export function resultUrlOf(task: AnyTask): string | null {
  const t = task as { image_url?: string | null; video_url?: string | null; result_url?: string | null };
  return t.image_url ?? t.video_url ?? t.result_url ?? null;
}

/**
 * `<task id><extension of the URL>`, both as the gateway sent them but reduced to a plain file name
 * of the working folder: a gateway cannot make it name another folder (`../x`, `%2F`).
 */
function defaultName(taskId: string, url: string): string {
  const ext = path.extname(new URL(url).pathname);
  const name = `${taskId.replace(/[^A-Za-z0-9_-]/g, '_')}${/^\.[A-Za-z0-9]{1,10}$/.test(ext) ? ext : ''}`;
  return name.replace(/^_*$/, 'result');
}

/**
 * Downloads a signed result URL (no key needed) to `out`, or to `<task id><extension of the URL>`
 * in the current folder; written to `<file>.part` first, renamed when whole. Answers the file.
 */
export async function download(url: string, taskId: string, out: string | undefined): Promise<string> {
  const file = out ?? defaultName(taskId, url);
  let response: Response;
  try {
    response = await fetch(url);
  } catch (err) {
    throw new ConnectionError(`downloading ${url}: ${(err as Error).message}`, { cause: err });
  }
  if (!response.ok || !response.body) throw new ConnectionError(`downloading the result: HTTP ${response.status}`);
  const part = `${file}.part`;
  try {
    await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), fs.createWriteStream(part));
    fs.renameSync(part, file);
  } catch (err) {
    fs.rmSync(part, { force: true });
    throw err;
  }
  return file;
}

/**
 * A chat stream that broke after it opened (status 200) on the gateway's or the upstream's side
 * (error type `upstream_error` or `server_error`): exit 5 like a 5xx, not 4 (G456).
 */
function gatewaySideStreamError(err: MediagateError): boolean {
  if (!(err instanceof StreamError)) return false;
  const type = (err.body as StandardErrorBody).error.type;
  return type === 'upstream_error' || type === 'server_error';
}

/** Reports an error of a client command on stderr (the task body on stdout with --json) and answers its exit code. */
export function reportError(err: unknown, json: boolean): number {
  const say = (line: string): void => {
    process.stderr.write(`mediagate: ${line}\n`);
  };
  if (err instanceof UsageError) {
    process.stderr.write(`${err.message}\n`);
    return EXIT.usage;
  }
  if (err instanceof TaskFailedError || err instanceof TaskCancelledError) {
    if (json) process.stdout.write(`${JSON.stringify(err.task)}\n`);
    say(err.message);
    return err instanceof TaskFailedError ? EXIT.failed : EXIT.cancelled;
  }
  if (err instanceof MediagateError) {
    say(`${err.message}${err.requestId ? ` (request id ${err.requestId})` : ''}`);
    const refusal = err.code === undefined ? undefined : KEY_REFUSALS[err.code];
    if (refusal) {
      say(refusal.hint);
      return refusal.exit;
    }
    return err.status >= 500 || gatewaySideStreamError(err) ? EXIT.server : EXIT.api;
  }
  if (err instanceof TimeoutError) {
    say(err.message);
    return EXIT.timeout;
  }
  if (err instanceof ConnectionError) {
    say(err.message);
    return EXIT.server;
  }
  if ((err as NodeJS.ErrnoException | undefined)?.code !== undefined) {
    say((err as Error).message);
    return EXIT.server;
  }
  throw err;
}
