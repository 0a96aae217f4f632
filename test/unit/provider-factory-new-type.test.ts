import { describe, expect, it, vi } from 'vitest';
import { readProvidersFile } from '../../src/providers/providers-file.js';
import { configError, configFiles } from '../helpers/config-files.js';

/** A type the gateway does not ship, registered by one more line in the list (G403): providers.json reads it, its schema checks it, routes reach it. */
vi.mock('../../src/providers/factories.js', async (original) => {
  const { PROVIDER_FACTORIES } = await original<typeof import('../../src/providers/factories.js')>();
  const { Type } = await import('@sinclair/typebox');
  const { registerFactory } = await import('../../src/providers/factory.js');
  const echoFactory = registerFactory({
    type: 'echo',
    families: ['pic'],
    optionsSchema: Type.Object(
      { loudness: Type.Optional(Type.Integer({ minimum: 1, maximum: 11, description: 'a whole number 1-11' })) },
      { additionalProperties: false },
    ),
    resolve: (options) => ({ loudness: options.loudness ?? 5 }),
    create: (options, ctx) => ({ id: ctx.id, capabilities: { families: ['pic'] }, concurrency: options.loudness }),
  });
  return { PROVIDER_FACTORIES: [...PROVIDER_FACTORIES, echoFactory] };
});

const { file } = configFiles('mediagate-provider-type-');
const defaults = { sandboxTiming: 'instant', sandboxChatTokensPerSecond: 0 } as const;

describe('a new provider type: one factory and its line in the list', () => {
  it('is read from providers.json with its defaults, routed to and made', async () => {
    const cfg = readProvidersFile({ MEDIAGATE_PROVIDERS: file({ providers: { e: { type: 'echo', concurrency: 2 } }, routes: { pic: [{ provider: 'e' }] } }) })!;
    expect(cfg.providers).toEqual([{ id: 'e', type: 'echo', loudness: 5, concurrency: 2 }]);
    expect(cfg.routes.pic).toEqual([{ provider: 'e', priority: 0, weight: 1 }]);
    expect((await cfg.create(defaults)).map((p) => [p.id, p.concurrency])).toEqual([['e', 5]]);
  });

  it('is checked by its own schema, and the messages name the type, the field and the rule', () => {
    const read = (content: unknown) => configError(() => readProvidersFile({ MEDIAGATE_PROVIDERS: file(content) })).message;
    expect(read({ providers: { e: { type: 'echo', loudness: 12 } } })).toMatch(/providers\.e\.loudness must be a whole number 1-11, got 12/);
    expect(read({ providers: { e: { type: 'echo', timing: 'fast' } } })).toMatch(
      /providers\.e\.timing does not apply to type echo \(it is a setting of sandbox; echo takes loudness\)/,
    );
    expect(read({ providers: { r: { type: 'relay', baseUrl: 'https://x', loudness: 3 } } })).toMatch(
      /providers\.r\.loudness does not apply to type relay \(it is a setting of echo;/,
    );
    expect(read({ providers: { e: { type: 'nope' } } })).toMatch(/providers\.e\.type must be one of relay, .*sandbox, echo, got "nope"/);
    expect(read({ providers: { e: { type: 'echo' } }, routes: { clip_3_1_fast: [{ provider: 'e' }] } })).toMatch(
      /routes\.clip_3_1_fast\[0\]: provider "e" \(type echo\) cannot serve clip_3_1_fast, a clip model \(echo serves pic\)/,
    );
  });
});
