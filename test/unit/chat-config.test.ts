import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config-error.js';
import { loadConfig } from '../../src/config.js';

describe('chat settings', () => {
  it('defaults: 50 tokens/s for the sandbox, a heartbeat every 15 s', () => {
    const c = loadConfig({});
    expect(c.sandboxChatTokensPerSecond).toBe(50);
    expect(c.chatHeartbeatMs).toBe(15_000);
  });
  it.each([
    ['0', 0],
    ['unlimited', 0],
    ['Unlimited', 0],
    ['120', 120],
    ['7.5', 7.5],
  ])('MEDIAGATE_SANDBOX_CHAT_TOKENS_PER_SECOND=%s', (raw, want) => {
    expect(loadConfig({ MEDIAGATE_SANDBOX_CHAT_TOKENS_PER_SECOND: raw }).sandboxChatTokensPerSecond).toBe(want);
  });
  it.each(['fast', '-1', '1e3', '2000000'])('MEDIAGATE_SANDBOX_CHAT_TOKENS_PER_SECOND=%s is refused', (raw) => {
    expect(() => loadConfig({ MEDIAGATE_SANDBOX_CHAT_TOKENS_PER_SECOND: raw })).toThrow(ConfigError);
    expect(() => loadConfig({ MEDIAGATE_SANDBOX_CHAT_TOKENS_PER_SECOND: raw })).toThrow(/MEDIAGATE_SANDBOX_CHAT_TOKENS_PER_SECOND/);
  });
  it('MEDIAGATE_CHAT_HEARTBEAT_MS is a whole number from 10 to 600000', () => {
    expect(loadConfig({ MEDIAGATE_CHAT_HEARTBEAT_MS: '250' }).chatHeartbeatMs).toBe(250);
    expect(() => loadConfig({ MEDIAGATE_CHAT_HEARTBEAT_MS: '5' })).toThrow(/MEDIAGATE_CHAT_HEARTBEAT_MS/);
    expect(() => loadConfig({ MEDIAGATE_CHAT_HEARTBEAT_MS: 'soon' })).toThrow(/MEDIAGATE_CHAT_HEARTBEAT_MS/);
  });
});
