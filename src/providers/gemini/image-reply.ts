/**
 * The image of a 200 `generateContent` answer (G147): the first `inlineData` part of
 * the first candidate, decoded and checked to be the image its `mimeType` says, its pixel size read
 * from its bytes. A blocked prompt (`promptFeedback.blockReason`) or a candidate stopped by a safety
 * rule (`finishReason` SAFETY, PROHIBITED_CONTENT, IMAGE_SAFETY, ...) without an image fails the
 * task saying so (UnrecoverableError); a candidate that ends without an image for another reason
 * (text only, NO_IMAGE) is a plain failure, so another attempt may be made; an answer that is not
 * the API's is the channel's fault.
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

interface Part {
  text?: string;
  inlineData?: { mimeType?: string; data?: string };
  thought?: boolean;
}
interface Answer {
  candidates?: { content?: { parts?: Part[] }; finishReason?: string; finishMessage?: string }[];
  promptFeedback?: { blockReason?: string; blockReasonMessage?: string };
}

export function imageOfAnswer(id: string, who: string, text: string, scrub: Scrub): LocalFile {
  let json: Answer;
  try {
    json = JSON.parse(text) as Answer;
  } catch {
    throw malformedReply(id, 'an answer that is not JSON', who);
  }
  if (!json || typeof json !== 'object') throw malformedReply(id, 'an answer that is not a GenerateContentResponse', who);
  const block = json.promptFeedback?.blockReason;
  if (block) throw new UnrecoverableError(`the prompt was refused by the upstream's safety system (blockReason ${block})`, { param: 'prompt' });
  const candidate = json.candidates?.[0];
  const image = candidate?.content?.parts?.find((p) => !p.thought && typeof p.inlineData?.data === 'string' && p.inlineData.data !== '')?.inlineData;
  if (!image) {
    const finish = candidate?.finishReason ?? 'none';
    if (BLOCKING_FINISH.has(finish))
      throw new UnrecoverableError(`the image was refused by the upstream's safety system (finishReason ${finish})`, { param: 'prompt' });
    if (!candidate) throw malformedReply(id, 'no candidates', who);
    const said = scrub(candidate.finishMessage ?? candidate.content?.parts?.find((p) => p.text)?.text);
    throw new Error(`${who} made no image (finishReason ${finish})${said ? `: ${said.slice(0, 200)}` : ''}`);
  }
  const bytes = Buffer.from(image.data!, 'base64');
  const type = isImageBytes(bytes);
  if (!type || !EXT[type]) throw malformedReply(id, `bytes that are not an image where ${image.mimeType ?? 'an image'} was declared`, who);
  let facts: MediaFacts;
  try {
    facts = probeImage(bytes);
  } catch {
    throw malformedReply(id, `a ${type} image without a readable pixel size`, who);
  }
  return { name: `image.${EXT[type]!}`, contentType: type, data: bytes, width: facts.width!, height: facts.height! };
}
