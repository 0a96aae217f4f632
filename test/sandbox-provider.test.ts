import { createSandboxProvider } from '../src/providers/sandbox/index.js';
import { runProviderContract } from './provider-contract.case.js';

runProviderContract('sandbox (fast timing)', () => createSandboxProvider({ timing: 'fast' }));
