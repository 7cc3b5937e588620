/** testpmd's forwarding modes by name (`--forward-mode`, `set fwd`). */
import { fiveTupleSwap } from './5tswap.js';
import { csum } from './csum.js';
import type { EngineFactory, FwdConfig } from './engine.js';
import { flowgen, flowgenCheck } from './flowgen.js';
import { gen, genCheck } from './gen.js';
import { icmpEcho } from './icmpecho.js';
import { io } from './io.js';
import { mac } from './mac.js';
import { macswap } from './macswap.js';
import { rxonly } from './rxonly.js';
import { rxprobe } from './rxprobe.js';
import type { Mempool } from '../mem/mempool.js';
import { txonly, txonlyCheck } from './txonly.js';

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
  ['rxprobe', rxprobe],
  ['gen', gen],
]);

/**
 * The configuration checks of the engines that build packets, by mode: the
 * control plane runs them before any lcore starts, so a bad `--txpkts` is
 * one line at start-up rather than a failing lcore. Each throws ArgError.
 */
export const engineChecks: ReadonlyMap<string, (config: FwdConfig, pool: Mempool) => void> = new Map([
  ['txonly', txonlyCheck],
  ['flowgen', flowgenCheck],
  ['gen', genCheck],
]);
