/**
 * sharp (libvips: ~20 MB resident and a native library to map) loaded on the first image it is asked
 * to make or read (G296), not at the start: a gateway that renders nothing never loads it.
 */
import type sharpModule from 'sharp';

export type Sharp = typeof sharpModule;

let loading: Promise<Sharp> | undefined;

/** The sharp function, imported once on first use. */
export function loadSharp(): Promise<Sharp> {
  loading ??= import('sharp').then((m) => m.default);
  return loading;
}
