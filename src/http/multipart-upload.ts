import type { MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { AppError, invalidField } from '../errors.js';

/** The limits of an upload's multipart body: one file part, a few small fields. */
export const UPLOAD_LIMITS = { files: 1, fields: 10, fieldSize: 1024, parts: 12 } as const;

const LIMIT_CODES = new Set(['FST_PARTS_LIMIT', 'FST_FILES_LIMIT', 'FST_FIELDS_LIMIT']);

/**
 * What a failure to read a multipart body means to the caller: everything the parser refuses is
 * what was sent (D8: never a 500). A file over the size bound stays a 413; too many parts is a 400
 * naming the rule; a malformed body (no boundary, cut short) a 400 saying what the parser found.
 */
export function multipartError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const { code, message } = err as { code?: string; message?: string };
  if (code === 'FST_REQ_FILE_TOO_LARGE') return new AppError('body_too_large', 'file: the upload is larger than this server accepts', { param: 'file' });
  if (code !== undefined && LIMIT_CODES.has(code)) {
    return invalidField(
      'file',
      `A multipart upload carries one file, in the field "file", and at most ${UPLOAD_LIMITS.fields} other fields of at most ${UPLOAD_LIMITS.fieldSize} bytes each`,
    );
  }
  return new AppError('invalid_request', `The multipart body is malformed: ${message ?? 'it could not be read'}`, { param: 'file' });
}

/**
 * The upload's file part, which must be the field `file`; a malformed body is the caller's 400.
 * `consume` gets the file; when it fails and the file's own stream has failed (a body cut short
 * inside the file), the failure is the caller's too, unless `consume` answered an AppError of its own.
 */
export async function withUploadedFile<T>(request: FastifyRequest, consume: (file: MultipartFile) => Promise<T>): Promise<T> {
  let file: MultipartFile | undefined;
  try {
    file = await request.file();
  } catch (err) {
    throw multipartError(err);
  }
  if (!file) throw invalidField('file', 'file is required: send the medium as the multipart field "file"');
  if (file.fieldname !== 'file') {
    file.file.resume(); // read and dropped
    throw invalidField('file', `file is required: send the medium as the multipart field "file" (the file part is named "${file.fieldname}")`);
  }
  try {
    return await consume(file);
  } catch (err) {
    // the file's stream failed: the body ended or broke inside the file (the parser's error, kept on the stream)
    const bodyError = file.file.errored;
    if (bodyError && !(err instanceof AppError)) throw multipartError(bodyError);
    throw err;
  }
}
