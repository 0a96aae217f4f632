import fs from 'node:fs';
import path from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { PROVIDER_FACTORIES } from '../../src/providers/factories.js';

/** The list of provider types (G403): every type once, each described by its own schema, and nothing else naming the types. */
const SRC = path.resolve(import.meta.dirname, '../../src');
const TYPES = PROVIDER_FACTORIES.map((f) => f.type);

describe('provider factories: one list registers every type', () => {
  it('registers each type once', () => {
    expect(new Set(TYPES).size).toBe(TYPES.length);
    expect(TYPES).toEqual(expect.arrayContaining(['relay', 'openai-chat', 'openai-images', 'replicate', 'gemini', 'fal', 'comfyui', 'sandbox']));
  });

  it('lists the factory of every provider folder that has one', () => {
    const list = fs.readFileSync(path.join(SRC, 'providers/factories.ts'), 'utf8');
    const folders = fs
      .readdirSync(path.join(SRC, 'providers'), { withFileTypes: true })
      .filter((e) => e.isDirectory() && fs.existsSync(path.join(SRC, 'providers', e.name, 'factory.ts')))
      .map((e) => e.name);
    expect(folders.length).toBe(TYPES.length);
    for (const folder of folders) expect(list, folder).toContain(`from './${folder}/factory.js'`);
  });

  it.each(PROVIDER_FACTORIES.map((f) => [f.type, f] as const))(
    '%s: its options schema refuses unknown fields and states the rule of each field',
    (_type, factory) => {
      expect(factory.optionsSchema.additionalProperties).toBe(false);
      expect(Value.Check(factory.optionsSchema, {})).toBe(true);
      expect(Value.Check(factory.optionsSchema, { surelyNotAField: 1 })).toBe(false);
      for (const [field, schema] of Object.entries(factory.optionsSchema.properties)) {
        expect((schema as { description?: string }).description, `${factory.type}.${field}`).toMatch(/\w/);
      }
      expect(factory.families.length).toBeGreaterThan(0);
    },
  );

  it('a new type needs only its line in the list: the file reader and the setup branch on no type', () => {
    for (const file of ['providers/providers-file.ts', 'main/provider-setup.ts']) {
      const text = fs.readFileSync(path.join(SRC, file), 'utf8');
      expect(text, file).not.toMatch(/\btype\s*[!=]==?\s*['"`]/);
      expect(text, file).not.toMatch(/switch\s*\(/);
      expect(text, file).not.toMatch(/providers\/(?:relay|openai|openai-images|replicate|gemini|fal|comfyui)\//);
    }
  });
});
