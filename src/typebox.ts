/**
 * TypeBox's values, loaded from its CommonJS build (G423). The package's ESM build is ~250 files,
 * each resolved, read and linked on its own by Node's ESM loader: loading it took ~70 ms of CPU at
 * every start, a tenth of the gateway's. The CommonJS build is the same code, loaded by `require`.
 * Modules of `src/` import TypeBox from here only, its values (`Type`, `Value`, `ValueErrorType`) and
 * its types alike (the types are erased at build); a rule of test/unit/layers.test.ts keeps it so.
 */
import { createRequire } from 'node:module';
import type * as TypeBox from '@sinclair/typebox';
import type * as TypeBoxValue from '@sinclair/typebox/value';

const require = createRequire(import.meta.url);
const typebox = require('@sinclair/typebox') as typeof TypeBox;
const value = require('@sinclair/typebox/value') as typeof TypeBoxValue;

export const Type: typeof TypeBox.Type = typebox.Type;
export const Value: typeof TypeBoxValue.Value = value.Value;
export const ValueErrorType: typeof TypeBoxValue.ValueErrorType = value.ValueErrorType;

export type * from '@sinclair/typebox';
export type { ValueError } from '@sinclair/typebox/value';
