/**
 * What names a generation at ComfyUI (G155): the prompt id it is queued under and the
 * seed it runs with when the caller gave none, both derived from the task id and the generation
 * number. A create repeated after a crash therefore asks for the same prompt id (and can find the
 * first one in the queue or history before queueing again), and a new generation after a failed one
 * gets a new id and a new seed (ComfyUI would otherwise answer an identical prompt from its cache).
 */
import { createHash } from 'node:crypto';

const digest = (what: string, taskId: string, generation: number): Buffer => createHash('sha256').update(`mediagate:${what}:${taskId}.${generation}`).digest();

/** A UUID (RFC 9562 version 8: name-based, SHA-256) for the task's generation. */
export function promptIdOf(taskId: string, generation: number): string {
  const b = digest('prompt', taskId, generation);
  b[6] = (b[6]! & 0x0f) | 0x80;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.subarray(0, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** A seed in 0 .. 2^48-1 (inside every sampler's range, exact as a JSON number). */
export function seedOf(taskId: string, generation: number): number {
  return digest('seed', taskId, generation).readUIntBE(0, 6);
}
