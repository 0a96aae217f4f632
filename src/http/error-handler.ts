import type { FastifyBaseLogger, FastifyError, FastifyInstance } from 'fastify';
import { AppError, asAppError, type ErrorStyle } from '../errors.js';
import { renderErrorBody } from '../contract/error-bodies.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Which error body this route answers with (D9); default `standard`. */
    errorStyle?: ErrorStyle;
  }
}

/** The 413 of a body over the route's limit, which it names (G485). */
const tooLarge = (limit: number | undefined): AppError =>
  new AppError('body_too_large', `The request body is larger than this server accepts${limit ? ` (${bytesInWords(limit)})` : ''}`);

/** A byte count as an operator writes it: whole MiB or KiB where it is one, else bytes. */
function bytesInWords(bytes: number): string {
  if (bytes % 1_048_576 === 0) return `${bytes / 1_048_576} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

const FASTIFY_CODES: Record<string, (limit?: number) => AppError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: tooLarge,
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new AppError('unsupported_content_type', 'Send the body as JSON with "Content-Type: application/json"'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => new AppError('invalid_json', 'The body is empty; send a JSON object'),
  FST_ERR_CTP_INVALID_JSON_BODY: () => new AppError('invalid_json', 'The body is not valid JSON'),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => new AppError('invalid_request', 'Content-Length does not match the body'),
};

/** Any thrown value (Fastify's own errors included) -> the AppError the caller sees (`bodyLimit`: the route's, named by a 413). */
export function toAppError(err: unknown, bodyLimit?: number): AppError {
  if (err instanceof AppError) return err;
  const fe = err as Partial<FastifyError> & { status?: number };
  const mapped = fe.code ? FASTIFY_CODES[fe.code] : undefined;
  if (mapped) return mapped(bodyLimit);
  if (err instanceof SyntaxError && fe.statusCode === 400) return new AppError('invalid_json', `The body is not valid JSON: ${err.message}`);
  const status = fe.statusCode ?? fe.status;
  if (status === 413) return tooLarge(bodyLimit);
  if (status !== undefined && status >= 400 && status < 500) return new AppError('invalid_request', fe.message ?? 'Invalid request');
  return asAppError(err);
}

/**
 * How a reply of 500 or more is logged (G425): a fault (any thrown value but an AppError, or an
 * AppError wrapping a cause) at `error` with the error and its stack; a refusal the gateway gives
 * on purpose (draining, no channel takes calls now, a bound says "later") at `warn`, by its code
 * and message only, since its stack says nothing an operator needs.
 */
export function logServerError(log: FastifyBaseLogger, err: unknown, appErr: AppError, msg: string): void {
  if (appErr.status < 500) return;
  if (err instanceof AppError && err.cause === undefined) log.warn({ code: appErr.code, status: appErr.status }, `${msg}: ${appErr.message}`);
  else log.error({ err }, msg);
}

/** One error handler for every route; it renders the route's family error body. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err, request, reply) => {
    const appErr = toAppError(err, request.routeOptions.bodyLimit);
    logServerError(request.log, err, appErr, 'request failed');
    const style = request.routeOptions.config?.errorStyle ?? 'standard';
    if (appErr.headers) void reply.headers(appErr.headers);
    // the catalog code also where the family's body carries only the status (videos, chat: G312)
    void reply.header('x-error-code', appErr.code);
    return reply.status(appErr.status).send(renderErrorBody(style, appErr));
  });
  app.setNotFoundHandler((request, reply) => {
    const err = new AppError('route_not_found', `No endpoint ${request.method} ${request.url.split('?')[0]}`);
    return reply.status(404).header('x-error-code', err.code).send(renderErrorBody('standard', err));
  });
}
