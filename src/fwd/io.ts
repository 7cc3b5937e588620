/** io: forward packets untouched (testpmd's iofwd). */
import { receive, transmit } from './common.js';
import type { FwdContext, FwdEngine, FwdStream } from './engine.js';

export function io(ctx: FwdContext): FwdEngine {
  return {
    name: 'io',
    fwd(fs: FwdStream): void {
      const n = receive(ctx, fs);
      if (n > 0) transmit(ctx, fs, n);
    },
  };
}
