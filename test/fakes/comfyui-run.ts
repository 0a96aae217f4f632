/**
 * How the fake ComfyUI runs a prompt (test/fakes/comfyui.ts): its output nodes save real media of
 * the size the graph asks: SaveImage a PNG of the EmptyLatentImage's size rounded down to 8,
 * SaveVideo an mp4 of the Wan latent's size rounded down to 16, `length / fps` seconds long, listed
 * under `images` with `animated: [true]` as the core PreviewVideo does; PreviewImage a `temp` file.
 * LoadImage decodes its input file (a file that is no image raises, as PIL does). Markers in the
 * sampler's positive text: `[oom]` raises torch.OutOfMemoryError, `[crash]` a RuntimeError.
 * Files are named as ComfyUI names them (`<prefix>_00001_.png`, the prefix's folders the
 * subfolder). Test-only.
 */
import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import { video } from '../helpers/media-fixtures.js';

export type Prompt = Record<string, { class_type: string; inputs: Record<string, unknown> }>;
export type QueueItem = [number, string, Prompt, Record<string, unknown>, string[]];
/** Files by `${type}/${subfolder}/${name}` (type: input, output, temp). */
export type FakeFiles = Map<string, { bytes: Buffer; contentType: string }>;

export const fileKey = (type: string, subfolder: string, name: string): string => `${type}/${subfolder ? `${subfolder}/` : ''}${name}`;

/** An exception a node raised while the prompt ran. */
export class NodeException extends Error {
  constructor(
    readonly exceptionType: string,
    message: string,
    readonly node: string,
  ) {
    super(message);
  }
}

const textOf = (p: Prompt, link: unknown): string =>
  Array.isArray(link) && p[String(link[0])]?.class_type === 'CLIPTextEncode' ? String(p[String(link[0])]!.inputs.text ?? '') : '';

/** The positive prompt text of the prompt's samplers (where the fake reads its markers). */
export const samplerText = (p: Prompt): string =>
  Object.values(p)
    .filter((n) => n.class_type === 'KSampler')
    .map((n) => textOf(p, n.inputs.positive))
    .join(' ');

export function createExecutor(files: FakeFiles): { execute(item: QueueItem): Promise<Record<string, unknown>> } {
  const counters = new Map<string, number>();

  /** What a node's first output is, followed through the graph: a size, frames and rate. */
  async function shapeOf(p: Prompt, link: unknown): Promise<{ width: number; height: number; frames: number; fps: number }> {
    if (!Array.isArray(link)) throw new Error('not a link');
    const node = p[String(link[0])]!;
    const i = node.inputs;
    switch (node.class_type) {
      case 'EmptyLatentImage':
        return { width: Math.floor(Number(i.width) / 8) * 8, height: Math.floor(Number(i.height) / 8) * 8, frames: 1, fps: 1 };
      case 'Wan22ImageToVideoLatent': {
        if (i.start_image !== undefined) await shapeOf(p, i.start_image);
        return { width: Math.floor(Number(i.width) / 16) * 16, height: Math.floor(Number(i.height) / 16) * 16, frames: Number(i.length), fps: 24 };
      }
      case 'LoadImage': {
        const f = files.get(fileKey('input', '', String(i.image)));
        const meta = await sharp(f!.bytes).metadata();
        return { width: meta.width ?? 1, height: meta.height ?? 1, frames: 1, fps: 1 };
      }
      case 'KSampler':
        return shapeOf(p, i.latent_image);
      case 'VAEDecode':
        return shapeOf(p, i.samples);
      case 'CreateVideo':
        return { ...(await shapeOf(p, i.images)), fps: Number(i.fps) };
      default:
        throw new Error(`the fake does not run ${node.class_type}`);
    }
  }

  function saved(prefix: string, ext: string): { filename: string; subfolder: string } {
    const parts = prefix.split('/');
    const base = parts.pop() || 'ComfyUI';
    const n = (counters.get(prefix) ?? 0) + 1;
    counters.set(prefix, n);
    return { filename: `${base}_${String(n).padStart(5, '0')}_.${ext}`, subfolder: parts.join('/') };
  }

  /** Runs a prompt's output nodes: the files they save, as history `outputs`. */
  async function execute(item: QueueItem): Promise<Record<string, unknown>> {
    const [, , p, , outputsToExecute] = item;
    const text = samplerText(p);
    const sampler = Object.entries(p).find(([, n]) => n.class_type === 'KSampler')?.[0] ?? '?';
    if (text.includes('[oom]'))
      throw new NodeException(
        'torch.OutOfMemoryError',
        'Allocation on device \nThis error means you ran out of memory on your GPU.\n\nTIPS: If the workflow worked before you might have accidentally set the batch_size to a large number.',
        sampler,
      );
    if (text.includes('[crash]')) throw new NodeException('RuntimeError', 'mat1 and mat2 shapes cannot be multiplied (154x2048 and 768x320)', sampler);
    const outputs: Record<string, unknown> = {};
    for (const id of outputsToExecute) {
      const node = p[id]!;
      if (node.class_type === 'SaveVideo') {
        const s = await shapeOf(p, node.inputs.video);
        const f = saved(String(node.inputs.filename_prefix), 'mp4');
        files.set(fileKey('output', f.subfolder, f.filename), {
          bytes: await video(s.width, s.height, s.frames / s.fps, Math.round(s.fps)),
          contentType: 'video/mp4',
        });
        outputs[id] = { images: [{ ...f, type: 'output' }], animated: [true] };
        continue;
      }
      const s = await shapeOf(p, node.inputs.images);
      const png = await sharp({ create: { width: s.width, height: s.height, channels: 3, background: { r: 30, g: 120, b: 90 } } })
        .png()
        .toBuffer();
      const type = node.class_type === 'PreviewImage' ? 'temp' : 'output';
      const f =
        type === 'temp'
          ? { filename: `ComfyUI_temp_${randomUUID().slice(0, 5)}_00001_.png`, subfolder: '' }
          : saved(String(node.inputs.filename_prefix), 'png');
      files.set(fileKey(type, f.subfolder, f.filename), { bytes: png, contentType: 'image/png' });
      outputs[id] = { images: [{ ...f, type }] };
    }
    return outputs;
  }

  return { execute };
}
