export { createRelayProvider, RELAY_DEFAULTS, type RelayProviderOptions, type RelayRefData } from './provider.js';
