/**
 * The `dpkit` command: `dpkit <subcommand> [args]`.
 * Errors a user can fix (ArgError) print one line and exit 2; anything else
 * is a bug and prints its stack.
 */
import { ArgError, DpkitError } from '../errors.js';
import { version } from '../package.js';

const USAGE = `Usage: dpkit <command> [options]

DPDK's data plane in TypeScript: mbufs, mempools, rings, ports, testpmd.

Commands:
  testpmd [EAL opts] -- [opts]   DPDK's testpmd (dpkit testpmd --help); alone: io on two net_null ports
  bench PRESET|NAME [opts]       A/B benchmark matrices and micro-benchmarks (dpkit bench --help)
  l3fwd [EAL opts] -- [opts]     DPDK's l3fwd: IPv4 routing by LPM or exact match (dpkit l3fwd --help)
  gen [EAL opts --] [opts]       traffic generator: paced streams, pcap replay, honest rates (dpkit gen --help)
  soak --minutes N [--out DIR]   Forward for N minutes on every in-process driver; fail if memory, fds or pools drift
  build-kernel IN.ts -o OUT.wasm Compile your AssemblyScript kernel against dpkit's heap (docs/api.md)
  --version, -v         print the version
  --help, -h            this text
`;

export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    case undefined:
    case '-h':
    case '--help':
      process.stdout.write(USAGE);
      return cmd === undefined ? 2 : 0;
    case '-v':
    case '--version':
      process.stdout.write(`dpkit ${version()}\n`);
      return 0;
    case 'testpmd': {
      const { testpmdMain } = await import('../apps/testpmd/main.js');
      return testpmdMain(rest);
    }
    case 'bench': {
      // The micro-benchmarks' table lives beside them in bench/, above the app they plug into.
      const [{ benchMain }, { benchmarks }] = await Promise.all([import('../apps/bench/main.js'), import('../../bench/index.js')]);
      return benchMain(rest, benchmarks);
    }
    case 'build-kernel': {
      const { buildKernelMain } = await import('./build-kernel.js');
      return buildKernelMain(rest);
    }
    case 'gen': {
      const { genMain } = await import('../apps/gen/main.js');
      return genMain(rest);
    }
    case 'l3fwd': {
      const { l3fwdMain } = await import('../apps/l3fwd/l3fwd.js');
      return l3fwdMain(rest);
    }
    case 'soak': {
      const { soakMain } = await import('../apps/soak/main.js');
      return soakMain(rest);
    }
    default:
      throw new ArgError(`unknown command '${cmd}' (try dpkit --help)`);
  }
}

export async function run(argv: string[]): Promise<void> {
  try {
    process.exitCode = await main(argv);
    settleSignals();
    // Exit now rather than when the loop drains: Node's teardown closes the signal watchers
    // first, and a signal landing then would kill a run that finished cleanly.
    process.exit();
  } catch (e) {
    if (e instanceof ArgError || (e instanceof Error && 'code' in e && String(e.code).startsWith('ERR_PARSE_ARGS'))) {
      process.stderr.write(`dpkit: ${e.message}\n`);
      process.exitCode = 2;
    } else if (e instanceof DpkitError) {
      process.stderr.write(`dpkit: ${e.message}\n`);
      process.exitCode = 1;
    } else {
      throw e;
    }
  }
}

/**
 * Once the command has finished and set its status, a stop signal (one sent as testpmd
 * stops, say) ends the process at once with that status instead of killing it: testpmd's
 * own handlers are gone by then, and Node's default would turn a clean exit 0 into a
 * death by signal. (testpmd's StopSignals.release() leaves an ignoring listener behind for
 * the same reason: between its release and this, the default would apply.)
 */
function settleSignals(): void {
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, () => process.exit());
}
