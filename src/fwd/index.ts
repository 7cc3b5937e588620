/** testpmd's forwarding modes by name (`--forward-mode`, `set fwd`). */
import { fiveTupleSwap } from './5tswap.js';
import { csum } from './csum.js';
import type { EngineFactory } from './engine.js';
import { flowgen } from './flowgen.js';
import { icmpEcho } from './icmpecho.js';
import { io } from './io.js';
import { mac } from './mac.js';
import { macswap } from './macswap.js';
import { rxonly } from './rxonly.js';
import { txonly } from './txonly.js';

export const engines: ReadonlyMap<string, EngineFactory> = new Map<string, EngineFactory>([
  ['io', io],
  ['mac', mac],
  ['macswap', macswap],
  ['5tswap', fiveTupleSwap],
  ['rxonly', rxonly],
  ['txonly', txonly],
  ['flowgen', flowgen],
  ['icmpecho', icmpEcho],
  ['csum', csum],
]);
