/** What a providers.json entry of type openai-images uses where it leaves a field out (kept apart from the adapter, which is loaded only when a provider of this type is configured: G422). */
export const OPENAI_IMAGES_DEFAULTS = { baseUrl: 'https://api.openai.com/v1', timeoutMs: 300_000, connectTimeoutMs: 10_000 } as const;
