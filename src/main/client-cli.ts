import { clientCommand } from './client-commands.js';

/**
 * Entry of `mediagate generate` and `mediagate tasks` (bin/mediagate.js picks it): it loads only the
 * SDK and the model catalog, not the gateway, so a client command starts in a tenth of the time.
 */
const [command, ...args] = process.argv.slice(2);
if (command !== 'generate' && command !== 'tasks') throw new Error(`client-cli.js runs generate and tasks, not ${command}`);
process.exitCode = await clientCommand(command, args);
