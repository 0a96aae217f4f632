import { describe, expectTypeOf, it } from 'vitest';
import type * as Sdk from '../packages/client/src/index.js';
import type { ChatCompletionBody } from '../src/contract/chat.js';
import type { ClipCreateBody } from '../src/contract/clip.js';
import type { ModelCenterCreateBody } from '../src/contract/model-center.js';
import type { MotionCreateBody } from '../src/contract/motion.js';
import type { PicCreateBody } from '../src/contract/pic.js';
import type { ReelCreateBody } from '../src/contract/reel.js';
import type { VideosCreateBody } from '../src/contract/videos.js';

// The SDK's hand-written request types (packages/client/src/types.ts) kept honest against the
// server's TypeBox schemas (G231): every request the SDK can type is one the server's
// schema types accept, and where the two are plain enough, the other way round too (the SDK is no
// narrower). A schema change that breaks either direction fails `npm run typecheck`.
describe('SDK request types against the server schemas', () => {
  it('every SDK request type is assignable to the server body type', () => {
    expectTypeOf<Sdk.PicCreateParams>().toExtend<PicCreateBody>();
    expectTypeOf<Sdk.ClipCreateParams>().toExtend<ClipCreateBody>();
    expectTypeOf<Sdk.ReelCreateParams>().toExtend<ReelCreateBody>();
    expectTypeOf<Sdk.MotionCreateParams>().toExtend<MotionCreateBody>();
    expectTypeOf<Sdk.VideosCreateParams>().toExtend<VideosCreateBody>();
    expectTypeOf<Sdk.ModelCenterCreateParams>().toExtend<ModelCenterCreateBody>();
    expectTypeOf<Sdk.ChatParams & { stream?: boolean }>().toExtend<ChatCompletionBody>();
  });

  it('the server body types are assignable to the SDK types (same models and enums)', () => {
    expectTypeOf<PicCreateBody>().toExtend<Sdk.PicCreateParams>();
    expectTypeOf<ReelCreateBody>().toExtend<Sdk.ReelCreateParams>();
    expectTypeOf<VideosCreateBody>().toExtend<Sdk.VideosCreateParams>();
    expectTypeOf<ClipCreateBody>().toExtend<Sdk.ClipCreateParams>();
    expectTypeOf<ChatCompletionBody['model']>().toEqualTypeOf<Sdk.ChatModel>();
    expectTypeOf<MotionCreateBody['model']>().toEqualTypeOf<Sdk.MotionModel>();
  });
});
