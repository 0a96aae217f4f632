// Baseline for the HTTP benchmarks: a bare Fastify 5 app, no plugins, no auth, no store, logger off.
// GET /bare answers a fixed JSON object about the size of a task query reply (~250 bytes);
// POST /bare parses a JSON body and answers a small JSON object, like a create call.
// Run as a child process by bench/run.js; prints one line `{"port":N}` on stdout once listening.
import Fastify from 'fastify';

const TASK_LIKE = {
  id: 'task_Qm9vYmFyQmF6UXV4MTIzNDU2',
  object: 'image.generation',
  created: 1767225600,
  model: 'pic-2',
  status: 'queued',
  progress: 0,
  image_url: null,
  error: null,
  note: 'bare fastify baseline reply padded to roughly the size of a task reply.....',
};

const app = Fastify({ logger: false });

app.get('/bare', async () => TASK_LIKE);

app.post('/bare', async (request) => {
  // any JSON value (reading a property of a number or string gives undefined, as of {})
  const body = /** @type {{ model?: unknown }} */ (request.body ?? {});
  return {
    id: 'task_Qm9vYmFyQmF6UXV4MTIzNDU2',
    object: 'image',
    created: Math.floor(Date.now() / 1000),
    model: typeof body.model === 'string' ? body.model : null,
    status: 'queued',
    progress: 0,
    error: null,
  };
});

const stop = () => {
  app.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.on('disconnect', stop);

await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
if (address === null || typeof address === 'string') throw new Error(`bare-server: not listening on TCP (${address})`);
process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);
