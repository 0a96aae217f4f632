/**
 * The image of a 200 answer (`{created, data: [{b64_json}], output_format?, size?}`): decoded,
 * checked to be the format asked (PNG unless the task asks JPEG) and read for its pixel size, which
 * is what the result reports. An answer without an image, or with other bytes, is the channel's
 * fault (ChannelError): another candidate may do better.
 */
import type { OutputSpec } from '../../contract/output.js';
import { probeImage } from '../../media/probe.js';
import type { MediaFacts } from '../../media/media-facts.js';
import { isImageBytes } from '../../media/sniff.js';
import { malformedReply } from '../toolkit/errors.js';
import type { LocalFile } from '../types.js';

const EXT: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' };

export function imageOfAnswer(id: string, who: string, text: string, output: Extract<OutputSpec, { kind: 'image' }>): LocalFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw malformedReply(id, 'an answer that is not JSON', who);
  }
  const data = (json as { data?: unknown } | null)?.data;
  const first = Array.isArray(data) ? (data[0] as { b64_json?: unknown; url?: unknown } | undefined) : undefined;
  const b64 = first?.b64_json;
  if (typeof b64 !== 'string' || b64 === '') {
    throw malformedReply(id, typeof first?.url === 'string' ? 'an image URL instead of base64 image data' : 'no image (data[0].b64_json is missing)', who);
  }
  const bytes = Buffer.from(b64, 'base64');
  const type = isImageBytes(bytes);
  const wanted = output.format === 'jpeg' ? 'image/jpeg' : 'image/png';
  if (type !== wanted) throw malformedReply(id, `${type ?? 'bytes that are not an image'} where ${wanted} was asked`, who);
  let facts: MediaFacts;
  try {
    facts = probeImage(bytes);
  } catch {
    throw malformedReply(id, `a ${wanted} image without a readable pixel size`, who);
  }
  return { name: `image.${EXT[type]!}`, contentType: type, data: bytes, width: facts.width!, height: facts.height! };
}
