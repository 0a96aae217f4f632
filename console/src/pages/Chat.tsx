import { type FormEvent, useEffect, useRef, useState } from 'react';
import type { ChatCompletionBody } from '../../../src/contract/chat.js';
import { stream } from '../api.js';
import { chatModels } from '../contract.js';
import { messageOf } from '../ui.js';

interface Message {
  role: 'user' | 'assistant';
  content: string;
}
interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** Chat: a model picker, the reply streamed as it comes, Stop, and the token usage. */
export function ChatPage() {
  const [models, setModels] = useState<string[]>([]);
  const [model, setModel] = useState('');
  const [messages, setMessages] = useState<Message[]>([]);
  const [draft, setDraft] = useState('');
  const [usage, setUsage] = useState<Usage>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const abort = useRef<AbortController | null>(null);

  useEffect(() => {
    chatModels().then(
      (m) => {
        setModels(m);
        setModel(m[0] ?? '');
      },
      (err: unknown) => setError(messageOf(err)),
    );
    return () => abort.current?.abort();
  }, []);

  const send = async (e: FormEvent): Promise<void> => {
    e.preventDefault();
    if (!draft.trim()) return;
    const history: Message[] = [...messages, { role: 'user', content: draft }];
    setMessages([...history, { role: 'assistant', content: '' }]);
    setDraft('');
    setError(undefined);
    setUsage(undefined);
    setBusy(true);
    const controller = new AbortController();
    abort.current = controller;
    const body: ChatCompletionBody = { model: model as ChatCompletionBody['model'], messages: history, stream: true };
    try {
      const res = await stream('/v1/chat/completions', body, controller.signal);
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        const events = buffer.split('\n\n');
        buffer = events.pop() ?? '';
        for (const event of events) {
          const data = event
            .split('\n')
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('\n');
          if (!data || data === '[DONE]') continue;
          const chunk = JSON.parse(data) as { choices?: { delta?: { content?: string } }[]; usage?: Usage; error?: { message: string } };
          if (chunk.error) setError(chunk.error.message);
          const piece = chunk.choices?.[0]?.delta?.content;
          if (piece) setMessages((m) => [...m.slice(0, -1), { role: 'assistant', content: m[m.length - 1]!.content + piece }]);
          if (chunk.usage) setUsage(chunk.usage);
        }
      }
    } catch (err) {
      if (!controller.signal.aborted) setError(messageOf(err));
    } finally {
      setBusy(false);
      abort.current = null;
    }
  };

  return (
    <div className="chat">
      <div className="field">
        <label htmlFor="chat-model">Model</label>
        <select id="chat-model" value={model} onChange={(e) => setModel(e.target.value)}>
          {models.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
      </div>
      <ol className="messages" aria-label="Conversation" aria-live="polite">
        {messages.map((m, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: the conversation only grows
          <li key={i} className={m.role}>
            <span className="who-said">{m.role === 'user' ? 'You' : 'Assistant'}</span>
            <p>{m.content}</p>
          </li>
        ))}
      </ol>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {usage && (
        <p className="usage">
          Tokens: {usage.prompt_tokens} prompt, {usage.completion_tokens} completion, {usage.total_tokens} total
        </p>
      )}
      <form onSubmit={send} className="chat-form">
        <div className="field">
          <label htmlFor="chat-message">Message</label>
          <textarea id="chat-message" rows={3} value={draft} onChange={(e) => setDraft(e.target.value)} />
        </div>
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            Send
          </button>
          <button type="button" disabled={!busy} onClick={() => abort.current?.abort()}>
            Stop
          </button>
        </div>
      </form>
    </div>
  );
}
