/** Chat usage rows. Part of the store contract (types.ts). */
/** One chat completion's token usage, billed to the key that asked. */
export interface ChatUsageRecord {
  keyId: string;
  model: string;
  requestId: string;
  promptTokens: number;
  completionTokens: number;
  createdAt: number;
}

export interface UsageStore {
  recordChatUsage(usage: ChatUsageRecord): Promise<void>;
  /** Token totals of a key per model, optionally since a time (Unix ms). */
  chatUsageByKey(keyId: string, since?: number): Promise<Array<{ model: string; requests: number; promptTokens: number; completionTokens: number }>>;
}
