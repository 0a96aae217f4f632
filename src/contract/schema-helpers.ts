import { Type, type TString, type TUnsafe } from '../typebox.js';

/** A string enum as a plain JSON Schema `enum` (clear validation errors, typed as the union). */
export function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/**
 * A caller media reference: an http(s) URL (addresses are checked when fetched) or, with
 * `assets` (the default), `assetId://{id}` of an uploaded asset of the caller.
 */
export const MediaUrl = (description = 'public http(s) URL or assetId://{id}', assets = true): TString =>
  Type.String({
    pattern: assets ? '^([hH][tT][tT][pP][sS]?://[^\\s]+|assetId://[A-Za-z0-9_-]{1,64})$' : '^[hH][tT][tT][pP][sS]?://[^\\s]+$',
    maxLength: 4096,
    description,
  });

/** An integer, or a string of decimal digits (`8` or `"8"`, D13). */
export const IntegerLike = (description: string) => Type.Union([Type.Integer(), Type.String({ pattern: '^-?[0-9]{1,6}$' })], { description });

/** The string form of an IntegerLike value as a number. */
export function toInteger(value: number | string | undefined): number | undefined {
  return value === undefined ? undefined : Number(value);
}

/**
 * `callback_url` of every create endpoint (G208), for the OpenAPI document: checked (and taken out
 * of the body) by webhooks/callback-url.ts, so any value passes the schema and gets that check's
 * error, the same for every family.
 */
export const CallbackUrlField = () =>
  Type.Optional(
    Type.Unsafe<string | null>({
      description:
        "Where the task's final state is POSTed, signed (Standard Webhooks; G208-G215): an http(s) URL at a public address, " +
        "at most 2048 characters; null: none, not even the key's default",
    }),
  );
