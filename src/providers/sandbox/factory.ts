import { Type } from '../../typebox.js';
import { createSandboxChatProvider } from '../../chat/sandbox.js';
import { FAMILIES } from '../../contract/families.js';
import { registerFactory, type CreateContext } from '../factory.js';
import { withChat } from '../registry.js';
import type { Provider } from '../types.js';
import { createSandboxProvider } from './index.js';
import type { SandboxTiming } from './timing.js';

interface SandboxEntry {
  timing?: SandboxTiming;
  chatTokensPerSecond?: number;
}

/** A sandbox making media and chat replies, at the entry's or the process's timing (the built-in one has no entry). */
export function sandboxWithChat(options: SandboxEntry, ctx: CreateContext): Provider {
  const media = createSandboxProvider({ id: ctx.id, timing: options.timing ?? ctx.sandboxTiming, concurrency: ctx.concurrency });
  const chat = createSandboxChatProvider({ tokensPerSecond: options.chatTokensPerSecond ?? ctx.sandboxChatTokensPerSecond });
  return withChat([media], ctx.id, chat)[0]!;
}

/** providers.json `type: sandbox`: replies made by the gateway itself (D26), media and chat. */
export const sandboxFactory = registerFactory({
  type: 'sandbox',
  families: [...FAMILIES, 'chat'],
  optionsSchema: Type.Object(
    {
      timing: Type.Optional(
        Type.Union([Type.Literal('instant'), Type.Literal('fast'), Type.Literal('realistic')], { description: 'one of instant, fast, realistic' }),
      ),
      chatTokensPerSecond: Type.Optional(Type.Number({ minimum: 0, maximum: 100_000, description: 'tokens per second between 0 (unlimited) and 100000' })),
    },
    { additionalProperties: false },
  ),
  resolve: (options): SandboxEntry => options,
  create: sandboxWithChat,
});
