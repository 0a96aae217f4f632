/**
 * Errors raised before a request reaches a route (G111): a path Fastify cannot decode
 * or route (`frameworkErrors`), and bytes Node's HTTP parser refuses (`clientErrorHandler`). Both
 * answer the standard error body `{"error": {"message", "type", "param", "code"}}` (D9: no route,
 * so no family), with a code of the catalog.
 */
import http, { type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { finished } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { renderErrorBody } from '../contract/error-bodies.js';
import { logServerError } from './error-handler.js';

/** Fastify's router limit on one path parameter (its `maxParamLength` default); task ids are 35 characters. */
export const MAX_PARAM_LENGTH = 100;

/** Node's bound on the arrival of a whole request (its `requestTimeout`): a 408 past it. */
export const REQUEST_TIMEOUT_MS = 120_000;

/** The connection bounds a 408 names: the headers bound is `MEDIAGATE_HEADERS_TIMEOUT_SECONDS` (G84). */
export interface ConnectionBounds {
  headersTimeoutMs: number;
}

const shortPath = (path: string): string => (path.length > 80 ? `${path.slice(0, 77)}...` : path);

/** Fastify's routing errors -> the error a caller gets. */
export function frameworkError(err: Error & { code?: string }, path: string): AppError {
  switch (err.code) {
    case 'FST_ERR_BAD_URL':
      return new AppError(
        'invalid_url',
        `The path ${JSON.stringify(shortPath(path))} is not a valid URL: a percent-escape in it does not decode to UTF-8 text`,
        { param: 'url' },
      );
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new AppError(
        'uri_too_long',
        `A path segment of ${JSON.stringify(shortPath(path))} is longer than ${MAX_PARAM_LENGTH} characters; no id is that long (task ids have 35 characters, asset ids 28)`,
        { param: 'url' },
      );
    default:
      return new AppError('internal_error', 'Internal server error', { cause: err });
  }
}

/** Fastify's `frameworkErrors` option: the request has no route yet, so the body is the standard one. */
export function handleFrameworkError(err: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply): void {
  const appErr = frameworkError(err, request.raw.url ?? '');
  logServerError(request.log, err, appErr, 'request failed before routing');
  void reply.header('x-request-id', request.id).status(appErr.status).send(renderErrorBody('standard', appErr));
}

/**
 * Words for the HTTP parser's complaints a client can act on, matched on `<llhttp code> <reason>`
 * (the same code covers several faults: the order of Content-Length and Transfer-Encoding decides
 * which of the two Node names).
 */
const PARSER_WORDS: ReadonlyArray<[RegExp, string]> = [
  [/can't be present with (Content-Length|Transfer-Encoding)/, 'it has both Content-Length and Transfer-Encoding; send one of them'],
  [/^HPE_INVALID_TRANSFER_ENCODING/, 'its Transfer-Encoding is not one this server reads (chunked, as the last coding)'],
  [/^HPE_(INVALID|UNEXPECTED)_CONTENT_LENGTH/, 'its Content-Length is not a single whole number'],
  [/^HPE_INVALID_HEADER_TOKEN/, 'a header name or value contains a character HTTP does not allow (a control byte, or a space in a name)'],
  [/^HPE_INVALID_METHOD/, 'a request does not start with a method; often the rest of a body longer than its Content-Length'],
  [/^HPE_INVALID_CHUNK_SIZE/, 'a chunk size of its chunked body is not hexadecimal'],
  [/^HPE_INVALID_VERSION/, 'its request line has no valid HTTP version'],
  [/^HPE_INVALID_URL/, 'its request target is not a valid path'],
  [/^HPE_INVALID_EOF_STATE/, 'the connection ended before the whole request arrived (a body shorter than its Content-Length?)'],
];

const seconds = (ms: number): string => `${ms / 1000} s`;

/** The error a connection gets for a `clientError` of Node's HTTP server; a 408 names the bounds this server applies. */
export function clientError(err: Error & { code?: string; reason?: string }, bounds: ConnectionBounds): AppError {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return new AppError(
      'request_timeout',
      `The request did not arrive whole in time (headers within ${seconds(bounds.headersTimeoutMs)}, the whole request within ${seconds(REQUEST_TIMEOUT_MS)}); the connection is closed`,
    );
  }
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    return new AppError('headers_too_large', 'The request headers are larger than 16 KiB; the connection is closed');
  }
  const what = `${err.code ?? ''} ${err.reason ?? err.message}`;
  const words = PARSER_WORDS.find(([re]) => re.test(what))?.[1] ?? `the HTTP parser says: ${err.reason ?? err.code ?? err.message}`;
  return new AppError('malformed_http', `The request is not valid HTTP/1.1: ${words}; the connection is closed`);
}

/** A whole HTTP/1.1 response carrying `err` in the standard body, closing the connection. */
export function clientErrorResponse(err: AppError, now = new Date()): string {
  const body = JSON.stringify(renderErrorBody('standard', err));
  return [
    `HTTP/1.1 ${err.status} ${http.STATUS_CODES[err.status] ?? 'Error'}`,
    `Date: ${now.toUTCString()}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/** Connections already being answered for a parser error (Node reports each further chunk again). */
const answered = new WeakSet<Socket>();

/** What Node keeps on a server socket: the response being written on it (`_httpMessage`, internal). */
type ServerSocket = Socket & { _httpMessage?: ServerResponse | null };

/**
 * Fastify's `clientErrorHandler`: Node's parser refused the bytes of a connection (or timed it out).
 * Requests parsed whole before the bad bytes are answered first, in order (a request whose
 * Content-Length is shorter than its body was read and may have created a task: its client must
 * see that answer); then the error response, then the connection is closed. When the bad bytes
 * are inside the body of the request being answered, that request cannot be answered: the error
 * goes out at once if nothing of its response has, else the connection is just closed (as Node does).
 */
export function handleClientError(err: Error & { code?: string; reason?: string }, socket: Socket, bounds: ConnectionBounds): void {
  if (err.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) return;
  answered.add(socket);
  const response = clientErrorResponse(clientError(err, bounds));
  const answerWhenIdle = (): void => {
    if (socket.destroyed) return;
    const current = (socket as ServerSocket)._httpMessage;
    if (current && !current.writableFinished) {
      if (current.req.complete) {
        finished(current, answerWhenIdle); // its finish hands the socket to the next pipelined response, if any
        return;
      }
      if (current.headersSent) {
        socket.destroy();
        return;
      }
    }
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(response);
    socket.destroySoon();
  };
  answerWhenIdle();
}
