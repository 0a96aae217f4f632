/** What a providers.json entry of type replicate uses where it leaves a field out (kept apart from the adapter, which is loaded only when a provider of this type is configured: G422). */
export const REPLICATE_DEFAULTS = { baseUrl: 'https://api.replicate.com/v1', timeoutMs: 60_000, connectTimeoutMs: 10_000 } as const;
