/**
 * TypeBox's values, loaded from one file (G484): dist/vendor/typebox.cjs, the part of TypeBox used
 * here bundled by the build (bin/vendor-typebox.js), beside this module once built. Without it (the
 * tests run src/ itself; a dist/ built without Rolldown), from the package's CommonJS build (G423).
 * The package is ~250 files, each resolved, read and compiled on its own: ~70-150 ms of CPU at every
 * start of a gateway or a command; the bundle ~15 ms.
 * Modules of `src/` import TypeBox from here only, its values (`Type`, `Value`, `ValueErrorType`) and
 * its types alike (the types are erased at build); a rule of test/unit/layers.test.ts keeps it so.
 */
import { createRequire } from 'node:module';
import type * as TypeBox from '@sinclair/typebox';
import type * as TypeBoxValue from '@sinclair/typebox/value';

interface Values {
  Type: typeof TypeBox.Type;
  Value: typeof TypeBoxValue.Value;
  ValueErrorType: typeof TypeBoxValue.ValueErrorType;
}

const require = createRequire(import.meta.url);

function load(): Values {
  try {
    return require('./vendor/typebox.cjs') as Values;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
  }
  const typebox = require('@sinclair/typebox') as typeof TypeBox;
  const value = require('@sinclair/typebox/value') as typeof TypeBoxValue;
  return { Type: typebox.Type, Value: value.Value, ValueErrorType: value.ValueErrorType };
}

const values = load();
export const Type: typeof TypeBox.Type = values.Type;
export const Value: typeof TypeBoxValue.Value = values.Value;
export const ValueErrorType: typeof TypeBoxValue.ValueErrorType = values.ValueErrorType;

export type * from '@sinclair/typebox';
export type { ValueError } from '@sinclair/typebox/value';
