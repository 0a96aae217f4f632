/**
 * TypeBox's one-file build (G484): the build writes dist/vendor/typebox.cjs, and what it hands out
 * (`Type`, `Value`, `ValueErrorType`) is the package's: the same schemas (the same global `Kind`
 * symbol included), the same checks, errors, defaults and conversions, each way between the two.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Kind, Type as PackageType } from '@sinclair/typebox';
import { Value as PackageValue, ValueErrorType as PackageErrorType } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/process.js';

const BUNDLE = path.join(ROOT, 'dist', 'vendor', 'typebox.cjs');

describe("TypeBox's one-file build (G484)", () => {
  it('the build wrote it, and it is one file that loads nothing of the package', () => {
    expect(fs.existsSync(BUNDLE)).toBe(true);
    const text = fs.readFileSync(BUNDLE, 'utf8');
    expect(text).not.toMatch(/require\(["']@sinclair/);
  });

  it("builds the package's schemas and checks, converts and reports values as the package does", () => {
    const bundle = createRequire(import.meta.url)(BUNDLE) as {
      Type: typeof PackageType;
      Value: typeof PackageValue;
      ValueErrorType: typeof PackageErrorType;
    };
    const build = (T: typeof PackageType) =>
      T.Object(
        {
          model: T.Union([T.Literal('pic'), T.Literal('pic-2')]),
          prompt: T.String({ minLength: 1, maxLength: 20 }),
          n: T.Optional(T.Integer({ minimum: 1, maximum: 4, default: 1 })),
          urls: T.Optional(T.Array(T.String({ format: 'uri' }), { maxItems: 2 })),
        },
        { additionalProperties: false },
      );
    const ours = build(bundle.Type);
    const theirs = build(PackageType);
    expect(ours).toEqual(theirs);
    expect(ours[Kind]).toBe('Object');
    expect(ours.properties.n[Kind]).toBe(theirs.properties.n[Kind]);
    expect(bundle.ValueErrorType).toEqual(PackageErrorType);
    const samples: unknown[] = [
      { model: 'pic', prompt: 'a cat' },
      { model: 'pic-3', prompt: '' },
      { model: 'pic-2', prompt: 'x'.repeat(21), n: 9, extra: true },
      { model: 'pic', prompt: 'a', n: '2' },
      null,
    ];
    for (const sample of samples) {
      for (const [V, schema] of [
        [bundle.Value, theirs],
        [PackageValue, ours],
      ] as const) {
        expect(V.Check(schema, sample)).toBe(PackageValue.Check(theirs, sample));
        expect([...V.Errors(schema, sample)].map((e) => [e.type, e.path])).toEqual([...PackageValue.Errors(theirs, sample)].map((e) => [e.type, e.path]));
        expect(V.Convert(schema, structuredClone(sample))).toEqual(PackageValue.Convert(theirs, structuredClone(sample)));
        if (sample !== null) expect(V.Default(schema, structuredClone(sample))).toEqual(PackageValue.Default(theirs, structuredClone(sample)));
      }
    }
  });
});
