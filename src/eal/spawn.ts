/**
 * Starting worker threads from either built JavaScript or TypeScript sources.
 *
 * Built code starts `name.js` beside the caller. Under tsx (tests,
 * development) the caller is a `.ts` file, and Node 20 does not carry tsx's
 * loader hooks into workers; the worker then starts with a two-line bootstrap
 * that registers tsx before importing `name.ts`.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';

export function startWorker(name: string, base: string, options: WorkerOptions = {}): Worker {
  if (!base.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, base), options);
  const target = new URL(`./${name}.ts`, base).href;
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(target)}); });`;
  return new Worker(boot, { ...options, eval: true });
}
