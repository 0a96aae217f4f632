/** What a providers.json entry of type gemini uses where it leaves a field out (kept apart from the adapter, which is loaded only when a provider of this type is configured: G422). */
export const GEMINI_DEFAULTS = {
  baseUrl: 'https://generativelanguage.googleapis.com/v1beta',
  timeoutMs: 300_000,
  connectTimeoutMs: 10_000,
  pollSeconds: 10,
} as const;
