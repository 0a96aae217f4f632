import v8 from 'node:v8';
import { loadConfig, type Config } from '../config.js';
import type { Env } from '../config-error.js';
import { createGateway } from './gateway.js';
import { startTracingIf } from './observability.js';

export interface RunningServer {
  url: string;
  config: Config;
  /** Graceful stop: no new work, running tasks finish or go back to the queue, then close. */
  close(): Promise<void>;
}

/** Starts the gateway: store, providers, workers, HTTP. `env` defaults to the process environment. */
export async function startServer(env: Env = process.env): Promise<RunningServer> {
  const config = loadConfig(env);
  // a service mostly waiting on I/O: collect garbage before the heap grows far past what is live (G162)
  if (config.heapGrowingPercent > 0) v8.setFlagsFromString(`--heap-growing-percent=${config.heapGrowingPercent}`);
  // before the gateway: its first spans already go to the SDK (G227)
  const tracing = await startTracingIf(config);
  const gateway = await createGateway(config);
  const address = await gateway.app.listen({ port: config.port, host: config.host });
  gateway.startBackground();
  gateway.logger.info(
    {
      address,
      dataDir: config.dataDir,
      role: config.role,
      workers: config.workers,
      sandboxTiming: config.sandboxTiming,
      metrics: config.observability.metrics !== undefined,
      tracing: tracing !== undefined,
    },
    'mediagate listening',
  );
  return {
    url: address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1'),
    config,
    close: async () => {
      await gateway.close();
      await tracing?.shutdown(); // the spans still buffered are sent
      gateway.logger.info('mediagate stopped');
    },
  };
}
