/** rxonly: receive and free (testpmd's rxonly). */
import { receive } from './common.js';
import type { FwdContext, FwdEngine, FwdStream } from './engine.js';

export function rxonly(ctx: FwdContext): FwdEngine {
  return {
    name: 'rxonly',
    fwd(fs: FwdStream): void {
      const n = receive(ctx, fs);
      if (n > 0) ctx.mb.freeBulk(ctx.burst, n);
    },
  };
}
