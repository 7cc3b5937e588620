/**
 * Starting worker threads from either built JavaScript or TypeScript sources.
 *
 * Built code starts `name.js` beside the caller. Under tsx (tests,
 * development) the caller is a `.ts` file, and Node 20 does not carry tsx's
 * loader hooks into workers; the worker then starts with a two-line bootstrap
 * that registers tsx before importing `name.ts`. `tsx` forces that bootstrap
 * for built code too: a worker that will import a user's `.ts` module.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';

export function startWorker(name: string, base: string, options: WorkerOptions = {}, tsx = base.endsWith('.ts')): Worker {
  if (!tsx) return new Worker(new URL(`./${name}.js`, base), options);
  const target = new URL(`./${name}.${base.endsWith('.ts') ? 'ts' : 'js'}`, base).href;
  const api = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(target)}); });`;
  return new Worker(boot, { ...options, eval: true });
}
