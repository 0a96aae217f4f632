import { Type, type Static, type TSchema } from '../typebox.js';
import { StringEnum } from './schema-helpers.js';

/**
 * The task replies of every family, as TypeBox schemas (G240): the reply builders in
 * src/families/*.ts are typed with `Static<>` of these, so a field added to a reply without its
 * schema (or the other way round) is a compile error; the routes hand them to the OpenAPI
 * document as response schemas. Exact: no reply carries a field that is not here
 * (`additionalProperties: false`), which test/gateway/openapi-replies.test.ts checks on real replies.
 */

const closed = { additionalProperties: false } as const;
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const TaskStatusSchema = StringEnum(['queued', 'processing', 'completed', 'failed', 'cancelled'], { description: 'Task state' });
const Id = Type.String({ description: 'Task id' });
const Created = Type.Integer({ description: 'When the task was created, Unix seconds' });
const Model = Type.String({ description: 'The model asked for' });
const Progress = Type.Integer({ minimum: 0, maximum: 100, description: 'Percent done; 100 once completed' });
const TaskError = Nullable(Type.String({ description: 'Why the task failed' }));
const ResultUrl = (what: string) => Nullable(Type.String({ description: `Signed, expiring URL of the ${what}; null until completed` }));
const ActualDuration = Type.Number({ description: 'Seconds of the produced video' });
/** An extra field (the interface allows extra fields in replies, D14): why a queued task waits (G274). */
const QueueReason = Nullable(
  StringEnum(['upstream_unavailable'], {
    description:
      '`upstream_unavailable` while the task waits in the queue because no upstream provider of its model takes requests now (it fails after `MEDIAGATE_UNAVAILABLE_FAIL_SECONDS` of that, its credits released); null otherwise',
  }),
);

const taskHead = <O extends TSchema>(object: O) => ({ id: Id, object, created: Created, model: Model, status: TaskStatusSchema, progress: Progress });

export const PicCreateReply = Type.Object(
  { ...taskHead(Type.Literal('image')), error: TaskError },
  { ...closed, title: 'PicCreateReply', description: 'The image task, queued' },
);
export const PicQueryReply = Type.Object(
  {
    ...taskHead(Type.Literal('image.generation')),
    image_url: ResultUrl('image'),
    error: TaskError,
    queue_reason: QueueReason,
  },
  { ...closed, title: 'PicQueryReply', description: 'An image task' },
);

const ClipObject = StringEnum(['video.generation', 'video'], { description: '`video.generation` for Form A, `video` for Form B' });
export const ClipCreateReply = Type.Object(
  { ...taskHead(ClipObject), error: TaskError },
  { ...closed, title: 'ClipCreateReply', description: 'The clip task, queued' },
);
export const ClipQueryReply = Type.Object(
  {
    ...taskHead(ClipObject),
    video_url: ResultUrl('video'),
    error: TaskError,
    queue_reason: QueueReason,
    actualDuration: Type.Optional(ActualDuration),
  },
  { ...closed, title: 'ClipQueryReply', description: 'A clip task' },
);

export const ReelCreateReply = Type.Object(
  {
    ...taskHead(Type.Literal('video.generation')),
    video_url: Type.Null(),
    error: TaskError,
  },
  { ...closed, title: 'ReelCreateReply', description: 'The reel task, queued' },
);
export const ReelQueryReply = Type.Object(
  {
    ...taskHead(Type.Literal('video.generation')),
    video_url: ResultUrl('video'),
    error: TaskError,
    queue_reason: QueueReason,
    actualDuration: Type.Optional(ActualDuration),
  },
  { ...closed, title: 'ReelQueryReply', description: 'A reel task' },
);

export const MotionCreateReply = Type.Object(
  {
    ...taskHead(Type.Literal('video')),
    video_url: Type.Null(),
    error: Type.Null(),
  },
  { ...closed, title: 'MotionCreateReply', description: 'The motion task, queued' },
);
/** Also the reply of a motion cancel and of a `videos` query. */
export const MotionQueryReply = Type.Object(
  {
    ...taskHead(Type.Literal('video')),
    video_url: ResultUrl('video'),
    actualDuration: Nullable(ActualDuration),
    error: TaskError,
    queue_reason: QueueReason,
  },
  { ...closed, title: 'MotionQueryReply', description: 'A motion task (also the cancel reply, and a videos task queried)' },
);

export const VideosCreateReply = Type.Object(
  {
    code: Type.Literal('0', { description: '"0": accepted' }),
    msg: Type.Null(),
    data: Type.Object({ projectId: Type.String({ description: 'The task id (query it at /v1/result/{projectId})' }) }, closed),
  },
  { ...closed, title: 'VideosCreateReply', description: 'Accepted: the task id as projectId' },
);

const modelCenterFields = {
  amount: Type.Number({ description: 'Credits charged for the task' }),
  actualDuration: Nullable(ActualDuration),
  error: TaskError,
  queue_reason: QueueReason,
};
/** Model Center task object of an imagegen model: `image_url`. */
export const ModelCenterImageReply = Type.Object(
  {
    ...taskHead(Type.Literal('image')),
    result_url: ResultUrl('result'),
    image_url: ResultUrl('image'),
    ...modelCenterFields,
  },
  { ...closed, title: 'ModelCenterImageTask', description: 'A Model Center task of an imagegen model' },
);
/** Model Center task object of a video model: `video_url`. */
export const ModelCenterVideoReply = Type.Object(
  {
    ...taskHead(Type.Literal('video')),
    result_url: ResultUrl('result'),
    video_url: ResultUrl('video'),
    ...modelCenterFields,
  },
  { ...closed, title: 'ModelCenterVideoTask', description: 'A Model Center task of a video model' },
);
export const ModelCenterReply = Type.Union([ModelCenterImageReply, ModelCenterVideoReply], {
  title: 'ModelCenterTask',
  description: 'The Model Center task object (the same for create and query)',
});

/** What any query path answers: the task in its own family's query shape (D4). */
export const TaskQueryReply = Type.Union([PicQueryReply, ClipQueryReply, ReelQueryReply, MotionQueryReply, ModelCenterImageReply, ModelCenterVideoReply], {
  title: 'TaskQueryReply',
  description: "The task in its family's query shape, whichever query path was used",
});

export type PicCreateReply = Static<typeof PicCreateReply>;
export type PicQueryReply = Static<typeof PicQueryReply>;
export type ClipCreateReply = Static<typeof ClipCreateReply>;
export type ClipQueryReply = Static<typeof ClipQueryReply>;
export type ReelCreateReply = Static<typeof ReelCreateReply>;
export type ReelQueryReply = Static<typeof ReelQueryReply>;
export type MotionCreateReply = Static<typeof MotionCreateReply>;
export type MotionQueryReply = Static<typeof MotionQueryReply>;
export type VideosCreateReply = Static<typeof VideosCreateReply>;
export type ModelCenterReply = Static<typeof ModelCenterReply>;
export type TaskQueryReply = Static<typeof TaskQueryReply>;
/** Any family's create reply. */
export type TaskCreateReply = PicCreateReply | ClipCreateReply | ReelCreateReply | MotionCreateReply | VideosCreateReply | ModelCenterReply;
