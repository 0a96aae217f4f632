import { describe, expectTypeOf, it } from 'vitest';
import type * as Sdk from '../../packages/client/src/index.js';
import type { AccountCreateBody, AdminAccount, AdminGrant, AdminLedgerEntry, GrantBody } from '../../src/contract/admin-accounts.js';
import type { AdminAuditEntry, AdminSettings } from '../../src/contract/admin-audit.js';
import type { AdminChannel, AdminChannelProbe } from '../../src/contract/admin-channels.js';
import type { AdminTask, AdminTaskAttempt, AdminTaskDetail, AdminTaskEvent } from '../../src/contract/admin-tasks.js';
import type { AdminTaskActivity } from '../../src/contract/admin-task-activity.js';
import type { AdminUsage } from '../../src/contract/admin-usage.js';
import type { AdminKey, AdminKeyCreated, AdminKeyRotated, KeyCreateBody, KeyPatchBody, KeyRotateBody } from '../../src/contract/admin-keys.js';
import type { ChatCompletionBody, ChatCompletionReply } from '../../src/contract/chat.js';
import type { ChatChunk } from '../../src/chat/chunks.js';
import type { ClipCreateBody } from '../../src/contract/clip.js';
import type { ModelCenterCreateBody } from '../../src/contract/model-center.js';
import type { MotionCreateBody } from '../../src/contract/motion.js';
import type { PicCreateBody } from '../../src/contract/pic.js';
import type { ReelCreateBody } from '../../src/contract/reel.js';
import type { VideosCreateBody } from '../../src/contract/videos.js';
import type { AccountReply, AssetDeletedReply, AssetReply } from '../../src/contract/gateway-replies.js';
import type { DeliveryListReply, TaskListReply, WebhookSecretReply } from '../../src/contract/task-extras.js';
import type {
  ClipCreateReply,
  ClipQueryReply,
  ModelCenterReply,
  MotionCreateReply,
  MotionQueryReply,
  PicCreateReply,
  PicQueryReply,
  ReelCreateReply,
  ReelQueryReply,
  TaskQueryReply,
  VideosCreateReply,
} from '../../src/contract/task-replies.js';

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

// The admin API (G313): the AdminClient's request types are accepted by the server's schemas, and
// its reply types are exactly what the server's reply schemas type (both ways).
describe('AdminClient types against the admin API schemas', () => {
  it('requests: every SDK request type is assignable to the server body type, and back', () => {
    expectTypeOf<Sdk.KeyCreateParams>().toExtend<KeyCreateBody>();
    expectTypeOf<KeyCreateBody>().toExtend<Sdk.KeyCreateParams>();
    expectTypeOf<Sdk.KeyUpdateParams>().toExtend<KeyPatchBody>();
    expectTypeOf<KeyPatchBody>().toExtend<Sdk.KeyUpdateParams>();
    expectTypeOf<Sdk.KeyRotateParams>().toExtend<KeyRotateBody>();
    expectTypeOf<Sdk.GrantParams>().toExtend<GrantBody>();
    expectTypeOf<{ name: string }>().toExtend<AccountCreateBody>();
  });

  it("replies: the server reply types and the SDK's are the same shapes", () => {
    expectTypeOf<AdminKey>().toExtend<Sdk.AdminKey>();
    expectTypeOf<Sdk.AdminKey>().toExtend<AdminKey>();
    expectTypeOf<AdminKeyCreated>().toExtend<Sdk.AdminKeyCreated>();
    expectTypeOf<Sdk.AdminKeyCreated>().toExtend<AdminKeyCreated>();
    expectTypeOf<AdminKeyRotated>().toExtend<Sdk.AdminKeyRotated>();
    expectTypeOf<Sdk.AdminKeyRotated>().toExtend<AdminKeyRotated>();
    expectTypeOf<AdminAccount>().toEqualTypeOf<Sdk.AdminAccount>();
    expectTypeOf<AdminLedgerEntry>().toExtend<Sdk.AdminLedgerEntry>();
    expectTypeOf<Sdk.AdminLedgerEntry>().toExtend<AdminLedgerEntry>();
    expectTypeOf<AdminGrant>().toExtend<Sdk.AdminGrant>();
    expectTypeOf<AdminAuditEntry>().toExtend<Sdk.AdminAuditEntry>();
    expectTypeOf<Sdk.AdminAuditEntry>().toExtend<AdminAuditEntry>();
    expectTypeOf<AdminSettings>().toExtend<Sdk.AdminSettings>();
    expectTypeOf<AdminTask>().toEqualTypeOf<Sdk.AdminTask>();
    expectTypeOf<AdminTaskAttempt>().toExtend<Sdk.AdminTaskAttempt>();
    expectTypeOf<Sdk.AdminTaskAttempt>().toExtend<AdminTaskAttempt>();
    expectTypeOf<AdminTaskEvent>().toExtend<Sdk.AdminTaskEvent>();
    expectTypeOf<Sdk.AdminTaskEvent>().toExtend<AdminTaskEvent>();
    expectTypeOf<AdminChannel>().toExtend<Sdk.AdminChannel>();
    expectTypeOf<Sdk.AdminChannel>().toExtend<AdminChannel>();
    expectTypeOf<AdminChannelProbe>().toEqualTypeOf<Sdk.AdminChannelProbe>();
    expectTypeOf<AdminUsage>().toExtend<Sdk.AdminUsage>();
    expectTypeOf<Sdk.AdminUsage>().toExtend<AdminUsage>();
    expectTypeOf<AdminTaskActivity>().toEqualTypeOf<Sdk.AdminTaskActivity>();
    // the detail's `view` is any family's query reply, which the SDK types more loosely (AnyTask)
    expectTypeOf<AdminTaskDetail>().toExtend<Sdk.AdminTaskDetail>();
    expectTypeOf<Omit<Sdk.AdminTaskDetail, 'view'>>().toExtend<Omit<AdminTaskDetail, 'view'>>();
  });
});

// The caller's replies: whatever the server's reply schemas let a reply be (every field, every
// null) is a value of the SDK's type for it, so code written against the SDK's types meets no
// field it was told could not be there.
describe("the SDK's reply types against the server's reply schemas", () => {
  it('each reply the gateway can send is assignable to the type the SDK answers it as', () => {
    expectTypeOf<PicCreateReply>().toExtend<Sdk.PicTask>();
    expectTypeOf<PicQueryReply>().toExtend<Sdk.PicTask>();
    expectTypeOf<ClipCreateReply>().toExtend<Sdk.VideoTask>();
    expectTypeOf<ClipQueryReply>().toExtend<Sdk.VideoTask>();
    expectTypeOf<ReelCreateReply>().toExtend<Sdk.VideoTask>();
    expectTypeOf<ReelQueryReply>().toExtend<Sdk.VideoTask>();
    expectTypeOf<MotionCreateReply>().toExtend<Sdk.VideoTask>();
    expectTypeOf<MotionQueryReply>().toExtend<Sdk.VideoTask>();
    expectTypeOf<VideosCreateReply>().toExtend<Sdk.VideosCreateReply>();
    expectTypeOf<ModelCenterReply>().toExtend<Sdk.ModelCenterTask>();
    expectTypeOf<TaskQueryReply>().toExtend<Sdk.AnyTask>();
    expectTypeOf<TaskListReply>().toExtend<Sdk.TaskList>();
    expectTypeOf<DeliveryListReply>().toExtend<Sdk.DeliveryList>();
    expectTypeOf<WebhookSecretReply>().toExtend<Sdk.WebhookSecret>();
    expectTypeOf<ChatCompletionReply>().toExtend<Sdk.ChatCompletion>();
    expectTypeOf<ChatChunk>().toExtend<Sdk.ChatChunk>();
  });

  it('assets and the account: the same shapes both ways', () => {
    expectTypeOf<AssetReply>().toEqualTypeOf<Sdk.Asset>();
    expectTypeOf<AssetDeletedReply>().toEqualTypeOf<Sdk.AssetDeleted>();
    expectTypeOf<AccountReply>().toEqualTypeOf<Sdk.Account>();
  });
});
