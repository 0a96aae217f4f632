/** What a channel's probe reports (G323): shared by the provider and the chat contracts. */
export interface ProbeResult {
  /** The call made, as `GET /models` (never the address or the key). */
  call: string;
  /** The upstream's HTTP status; null for a channel that makes media itself (the sandbox). */
  status: number | null;
}
