/**
 * The OpenAPI document (G240-G244): `/openapi.json` is a valid OpenAPI 3.1 document
 * (checked by an independent validator), every operation in it has a 2xx reply with a schema (or
 * an explicit no-body reply) and error replies in one of the three error bodies; a route without
 * response schemas is refused at start, and a response schema never changes what a reply says.
 * Generic over the operations: routes added later are held to the same rules.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { Type } from '@sinclair/typebox';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentOnlySerializers, requireResponseSchemas } from '../../../src/http/openapi.js';
import { createHarness, type Harness } from '../../helpers/harness.js';

interface Media {
  schema?: Record<string, unknown>;
}
interface Response {
  description?: string;
  content?: Record<string, Media>;
}
interface Operation {
  responses?: Record<string, Response>;
  tags?: string[];
  summary?: string;
}
type Doc = { openapi: string; paths: Record<string, Record<string, Operation>> };

let h: Harness;
let doc: Doc;
beforeAll(async () => {
  h = await createHarness({ workers: false, reviewMedia: false });
  const res = await h.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = res.json() as Doc;
});
afterAll(async () => {
  await h.close();
});

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
function operations(): Array<{ name: string; op: Operation }> {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })),
  );
}

const ERROR_TITLES = ['Error', 'VideosError', 'ChatError'];
/** Statuses answered without a body: redirects, not modified, failed preconditions, ranges. */
const noBody = (status: string): boolean => /^3/.test(status) || status === '412' || status === '416';

describe('/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(doc as unknown as Record<string, unknown>);
    expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
    expect(result.valid).toBe(true);
    // the validator does refuse: the same document with a reply that is no Response Object
    const broken = structuredClone(doc) as Doc;
    (broken.paths['/v1/pic/images']!.post!.responses as Record<string, unknown>)['200'] = { content: 'json' };
    expect((await new Validator().validate(broken as unknown as Record<string, unknown>)).valid).toBe(false);
  });

  it('documents the routes of every family, assets, chat, the account, files and health', () => {
    const names = operations().map((o) => o.name);
    for (const want of [
      'POST /v1/pic/images',
      'POST /clip/videos',
      'POST /reel/videos',
      'POST /v1/reel/videos',
      'POST /v1/motion/videos',
      'POST /v1/motion/videos/{id}/cancel',
      'POST /v1/videos/videos',
      'POST /v2/model-center/tasks',
      'GET /v2/model-center/tasks/{id}',
      'GET /v1/result/{id}',
      'GET /v1/videos/{id}',
      'GET /v1/reel/videos/{id}',
      'POST /v1/chat/completions',
      'POST /v2/model-center/assets',
      'GET /v2/model-center/assets/{id}',
      'DELETE /v2/model-center/assets/{id}',
      'GET /v1/account',
      'GET /files/{taskId}/{name}',
      'HEAD /files/{taskId}/{name}',
      'GET /healthz',
      'GET /readyz',
    ])
      expect(names).toContain(want);
  });

  it("documents the web console's sign-in, session and sign-out, with the cookie and the CSRF header as security schemes (G372)", () => {
    const full = doc as Doc & { components: { securitySchemes: Record<string, unknown> } };
    expect(full.components.securitySchemes).toMatchObject({
      console_session: { type: 'apiKey', in: 'cookie', name: 'mediagate_session' },
      console_csrf: { type: 'apiKey', in: 'header', name: 'x-csrf-token' },
    });
    const ops = doc.paths['/console/session'] as Record<string, Operation & { security?: unknown; requestBody?: any }>;
    expect(Object.keys(ops).sort()).toEqual(['delete', 'get', 'post']);
    expect(ops.post!.security).toEqual([]);
    expect(Object.keys(ops.post!.requestBody.content['application/json'].schema.properties)).toEqual(['api_key']);
    expect(ops.post!.responses!['200']!.content!['application/json']!.schema!.properties).toHaveProperty('csrf_token');
    expect(ops.get!.security).toEqual([{ console_session: [] }]);
    expect(ops.delete!.security).toEqual([{ console_session: [], console_csrf: [] }]);
    for (const op of Object.values(ops)) expect(op.tags).toEqual(['console']);
  });

  it('gives every operation a 2xx reply with a schema (or an explicit no-body reply) and error replies in an error body', () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThan(15);
    for (const { name, op } of ops) {
      const responses = Object.entries(op.responses ?? {});
      const ok = responses.filter(([status]) => /^2/.test(status));
      expect(ok.length, `${name}: no 2xx reply`).toBeGreaterThan(0);
      for (const [status, r] of ok) {
        expect(r.description, `${name} ${status}: no description`).toBeTruthy();
        expect(r.description, `${name} ${status}: give the reply schema a description`).not.toBe('Default Response');
        const media = Object.values(r.content ?? {});
        // 204 No Content is the explicit no-body reply (sign-out): described, with no content
        if (status === '204') {
          expect(r.content, `${name} 204: a no-content reply with content`).toBeUndefined();
          continue;
        }
        expect(media.length, `${name} ${status}: no content`).toBeGreaterThan(0);
        for (const m of media) expect(m.schema, `${name} ${status}: a media type without schema`).toBeDefined();
      }
      // error replies: an error body, described by its catalog codes; or no body at all (412, 416 of a file)
      const errors = responses.filter(([status]) => /^[45]/.test(status));
      const withBody = errors.filter(([, r]) => r.content !== undefined);
      expect(withBody.length, `${name}: no error reply with an error body`).toBeGreaterThan(0);
      for (const [status, r] of withBody) {
        expect(Object.keys(r.content!), `${name} ${status}`).toEqual(['application/json']);
        expect(ERROR_TITLES, `${name} ${status}: not an error body`).toContain(r.content!['application/json']!.schema!.title);
        expect(r.description, `${name} ${status}: the codes are not described`).toMatch(/`[a-z_]+`: /);
      }
      for (const [status, r] of responses.filter(([s]) => noBody(s))) {
        expect(r.content, `${name} ${status}: a no-body reply with content`).toBeUndefined();
        expect(r.description, `${name} ${status}: no description`).toBeTruthy();
      }
    }
  });

  it('is what /docs shows, without a key', async () => {
    const page = await h.app.inject({ method: 'GET', url: '/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const shown = await h.app.inject({ method: 'GET', url: '/docs/json' });
    expect(shown.statusCode).toBe(200);
    expect(shown.json()).toEqual(doc);
  });

  it('documents the chat reply both as JSON and as server-sent events', () => {
    const ok = doc.paths['/v1/chat/completions']!.post!.responses!['200']!;
    expect(Object.keys(ok.content!).sort()).toEqual(['application/json', 'text/event-stream']);
    expect(ok.content!['application/json']!.schema!.title).toBe('ChatCompletion');
  });

  it('lists, per error status, exactly the catalog codes of that status', () => {
    const op = doc.paths['/v1/pic/images']!.post!;
    const codes = (status: string) =>
      ((op.responses![status]!.content!['application/json']!.schema as any).properties.error.properties.code.enum as string[]).sort();
    expect(codes('402')).toEqual(['insufficient_credits']);
    expect(codes('409')).toEqual([
      'grant_exceeds_available',
      'grant_exceeds_maximum',
      'idempotency_in_progress',
      'idempotency_key_reused',
      'invalid_task_state',
      'key_revoked',
    ]);
    expect(codes('403')).toEqual([
      'admin_only',
      'asset_quota_exceeded',
      'caller_only',
      'csrf_token_invalid',
      'model_not_allowed',
      'result_link_expired',
      'result_link_invalid',
    ]);
    const videos = doc.paths['/v1/videos/videos']!.post!.responses!['401']!.content!['application/json']!.schema as any;
    expect(videos.title).toBe('VideosError');
    expect(videos.properties.code.enum).toEqual(['401']);
  });
});

describe('response schemas', () => {
  it('a documented route without a 2xx or an error response schema is refused at start; a hidden one is not', async () => {
    const app = Fastify();
    requireResponseSchemas(app);
    expect(() => app.get('/a', async () => ({}))).toThrow(/GET \/a declares no 2xx response schema/);
    expect(() => app.get('/b', { schema: { response: { 200: Type.Object({}) } } }, async () => ({}))).toThrow(/GET \/b declares no error response schema/);
    expect(() => app.get('/c', { schema: { hide: true } }, async () => ({}))).not.toThrow();
    expect(() => app.get('/d', { schema: { response: { 200: Type.Object({}), 404: Type.Object({}) } } }, async () => ({}))).not.toThrow();
    await app.close();
  });

  it('document only: a reply is written whole and as it is, whatever its schema says (no dropped fields, no coercion)', async () => {
    const app = Fastify({ schemaController: { compilersFactory: { buildSerializer: documentOnlySerializers() } } });
    const reply = { a: '1', extra: { nested: true }, n: 1.5, list: [1, 'two'] };
    app.get('/r', { schema: { response: { 200: Type.Object({ a: Type.Integer(), n: Type.Integer() }, { additionalProperties: false }) } } }, async () => reply);
    const res = await app.inject({ method: 'GET', url: '/r' });
    expect(res.body).toBe(JSON.stringify(reply));
    await app.close();
  });
});
