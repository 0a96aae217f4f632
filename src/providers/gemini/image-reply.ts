/**
 * The image of a 200 `generateContent` answer (G147): the first `inlineData` part of
 * the first candidate, decoded and checked to be the image its `mimeType` says, its pixel size read
 * from its bytes. A blocked prompt (`promptFeedback.blockReason`) or a candidate stopped by a safety
 * rule (`finishReason` SAFETY, PROHIBITED_CONTENT, IMAGE_SAFETY, ...) without an image fails the
 * task saying so (UnrecoverableError); a candidate that ends without an image for another reason
 * (text only, NO_IMAGE) is a plain failure, so another attempt may be made; an answer that is not
 * the API's (not JSON, a field of another type) is an UnexpectedReply (G272, G453).
 */
import { probeImage } from '../../media/probe.js';
import type { MediaFacts } from '../../media/media-facts.js';
import { isImageBytes } from '../../media/sniff.js';
import { malformedReply, type Scrub } from '../toolkit/errors.js';
import { UnrecoverableError, type LocalFile } from '../types.js';

const EXT: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' };

/** finishReasons that mean a safety rule stopped the image. */
export const BLOCKING_FINISH = new Set([
  'SAFETY',
  'PROHIBITED_CONTENT',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'BLOCKLIST',
  'SPII',
  'RECITATION',
  'IMAGE_RECITATION',
]);

const obj = (v: unknown): Record<string, unknown> | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** A list field: absent is empty; anything else than a list is not the API's answer. */
function listOf(id: string, who: string, v: unknown, what: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw malformedReply(id, `an answer whose ${what} is not a list`, who);
  return v;
}

export function imageOfAnswer(id: string, who: string, answer: string, scrub: Scrub): LocalFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer);
  } catch {
    throw malformedReply(id, 'an answer that is not JSON', who);
  }
  const json = obj(parsed);
  if (!json) throw malformedReply(id, 'an answer that is not a GenerateContentResponse', who);
  const block = text(obj(json.promptFeedback)?.blockReason);
  if (block) throw new UnrecoverableError(`the prompt was refused by the upstream's safety system (blockReason ${block})`, { param: 'prompt' });
  const candidates = listOf(id, who, json.candidates, 'candidates');
  const candidate = obj(candidates[0]);
  const content = obj(candidate?.content);
  const parts = listOf(id, who, content?.parts, 'candidates[0].content.parts').map(obj);
  if (parts.some((p) => p === undefined)) throw malformedReply(id, 'a part that is not an object', who);
  // inline data of the answer's own (thought images are drafts); one without bytes is not the API's
  const inline = parts.filter((p) => p!.thought !== true && p!.inlineData !== undefined).map((p) => obj(p!.inlineData));
  const image = inline.find((d) => typeof d?.data === 'string' && d.data !== '');
  if (!image && inline.length > 0) throw malformedReply(id, 'an inlineData part without image data', who);
  if (!image) {
    const finish = text(candidate?.finishReason) ?? 'none';
    if (BLOCKING_FINISH.has(finish))
      throw new UnrecoverableError(`the image was refused by the upstream's safety system (finishReason ${finish})`, { param: 'prompt' });
    if (!candidate) throw malformedReply(id, 'no candidates', who);
    const said = scrub(text(candidate.finishMessage) ?? parts.map((p) => text(p?.text)).find(Boolean));
    throw new Error(`${who} made no image (finishReason ${finish})${said ? `: ${said.slice(0, 200)}` : ''}`);
  }
  const mimeType = text(image.mimeType);
  const bytes = Buffer.from(image.data as string, 'base64');
  const type = isImageBytes(bytes);
  if (!type || !EXT[type]) throw malformedReply(id, `bytes that are not an image where ${mimeType?.slice(0, 40) ?? 'an image'} was declared`, who);
  let facts: MediaFacts;
  try {
    facts = probeImage(bytes);
  } catch {
    throw malformedReply(id, `a ${type} image without a readable pixel size`, who);
  }
  return { name: `image.${EXT[type]!}`, contentType: type, data: bytes, width: facts.width!, height: facts.height! };
}
