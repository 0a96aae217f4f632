/**
 * Every provider type the gateway knows, one line each (G403): providers.json is read and its
 * providers made through this list alone. A new type is a folder with its factory (factory.ts) and
 * a line here.
 */
import { comfyUiFactory } from './comfyui/factory.js';
import type { RegisteredFactory } from './factory.js';
import { falFactory } from './fal/factory.js';
import { geminiFactory } from './gemini/factory.js';
import { openAiChatFactory } from './openai/factory.js';
import { openAiImagesFactory } from './openai-images/factory.js';
import { relayFactory } from './relay/factory.js';
import { replicateFactory } from './replicate/factory.js';
import { sandboxFactory } from './sandbox/factory.js';

export const PROVIDER_FACTORIES: readonly RegisteredFactory[] = [
  relayFactory,
  openAiChatFactory,
  openAiImagesFactory,
  replicateFactory,
  geminiFactory,
  falFactory,
  comfyUiFactory,
  sandboxFactory,
];
