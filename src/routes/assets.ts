import multipart from '@fastify/multipart';
import { requireCaller } from '../auth/key-rules.js';
import type { FastifyInstance } from 'fastify';
import { AppError, invalidField } from '../errors.js';
import { UPLOAD_LIMITS, withUploadedFile } from '../http/multipart-upload.js';
import { assetReply } from '../families/asset.js';
import type { AssetService } from '../media/asset-service.js';
import type { RoutePaths } from './route-types.js';
import { TaskIdParams } from './results.js';
import { AssetDeletedReply, AssetReply } from '../contract/gateway-replies.js';
import { KEYED_ERRORS, responses } from '../contract/responses.js';

const HTTP_URL = /^https?:\/\/\S+$/i;

/**
 * The asset upload API: `POST {base_url}/v2/model-center/assets` takes a multipart upload (one
 * file, field `file`) or JSON `{"url": "https://..."}` and answers the reviewed asset;
 * `GET {base_url}/v2/model-center/assets/{id}` answers it again, `DELETE` removes it. Approved assets are usable as
 * `assetId://{id}` by the same key.
 */
export function registerAssetRoutes(app: FastifyInstance, assets: AssetService, paths: RoutePaths, maxBytes: number): void {
  const base = `${paths.basePrefix}/v2/model-center/assets`;
  void app.register(async (scope) => {
    await scope.register(multipart, { limits: { fileSize: maxBytes, ...UPLOAD_LIMITS } });
    scope.post(
      base,
      {
        schema: {
          tags: ['model-center'],
          summary: 'Upload an asset (multipart field `file`, or JSON {url}) for use as assetId://{id}',
          response: responses({ 200: AssetReply }, [400, 401, 403, 413, 429, 500, 503]),
        },
      },
      async (request) => {
        requireCaller(request.apiKey); // admin keys upload nothing (G301)
        if (request.isMultipart()) {
          const declared = Number(request.headers['content-length']);
          return assetReply(
            await withUploadedFile(request, (file) => assets.upload(request.apiKey.id, file.file, Number.isFinite(declared) ? declared : undefined)),
          );
        }
        const body = request.body as { url?: unknown } | undefined;
        if (body === null || typeof body !== 'object')
          throw new AppError('invalid_json', 'Send a multipart upload (field "file") or a JSON object {"url": "https://..."}');
        const wanted = 'a public http(s) URL of the image, video or audio to upload (or send a multipart field "file")';
        if (body.url === undefined) throw invalidField('url', `url is required: ${wanted}`);
        if (typeof body.url !== 'string') throw invalidField('url', `url must be a string: ${wanted} (got ${body.url === null ? 'null' : typeof body.url})`);
        if (body.url.length > 4096) throw invalidField('url', `url must be at most 4096 characters (got ${body.url.length})`);
        if (!HTTP_URL.test(body.url)) throw invalidField('url', `url must be ${wanted}`);
        return assetReply(await assets.fromUrl(request.apiKey.id, body.url));
      },
    );
  });
  app.get<{ Params: { id: string } }>(
    `${base}/:id`,
    {
      schema: {
        tags: ['model-center'],
        summary: 'Query an asset',
        params: TaskIdParams,
        response: responses({ 200: AssetReply }, [404, 414, ...KEYED_ERRORS]),
      },
    },
    async (request) => assetReply(await assets.get(request.apiKey.id, request.params.id)),
  );
  app.delete<{ Params: { id: string } }>(
    `${base}/:id`,
    {
      schema: {
        tags: ['model-center'],
        summary: 'Delete an asset (tasks that already use it keep their copy)',
        params: TaskIdParams,
        response: responses({ 200: AssetDeletedReply }, [404, 414, ...KEYED_ERRORS]),
      },
    },
    async (request): Promise<AssetDeletedReply> => {
      await assets.remove(request.apiKey.id, request.params.id);
      return { id: request.params.id, object: 'asset', deleted: true };
    },
  );
}
