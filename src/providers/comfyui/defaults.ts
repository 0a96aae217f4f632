/** What a providers.json entry of type comfyui uses where it leaves a field out (kept apart from the adapter, which is loaded only when a provider of this type is configured: G422). */
export const COMFYUI_DEFAULTS = { baseUrl: 'http://127.0.0.1:8188', timeoutMs: 60_000, connectTimeoutMs: 10_000 } as const;
