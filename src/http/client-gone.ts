import type { FastifyReply } from 'fastify';

/**
 * An AbortSignal that fires when the client goes away before its reply was fully sent (the
 * response closes unfinished); `release()` stops watching once the work it guards is over.
 */
export function abortWhenClientGone(reply: FastifyReply, reason?: () => unknown): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const raw = reply.raw;
  const onClose = (): void => { if (!raw.writableFinished) controller.abort(reason?.()); };
  raw.on('close', onClose);
  return { signal: controller.signal, release: () => { raw.off('close', onClose); } };
}
