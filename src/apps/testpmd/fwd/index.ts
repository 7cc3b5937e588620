/** testpmd's forwarding modes by name (`--forward-mode`, `set fwd`). */
import type { EngineFactory } from './engine.js';
import { io } from './io.js';
import { mac } from './mac.js';
import { macswap } from './macswap.js';
import { rxonly } from './rxonly.js';
import { txonly } from './txonly.js';

export const engines: ReadonlyMap<string, EngineFactory> = new Map<string, EngineFactory>([
  ['io', io],
  ['mac', mac],
  ['macswap', macswap],
  ['rxonly', rxonly],
  ['txonly', txonly],
]);
