import { Worker } from 'node:worker_threads';

/**
 * Starts the worker module `name` that sits beside the module at `base` (its `import.meta.url`). Under the test
 * runner modules are TypeScript source, which a worker can only load after registering the TypeScript loader
 * (tsx, a dev dependency) in that worker; the built app runs the compiled JavaScript directly.
 */
export function spawnWorker(base: string, name: string): Worker {
  if (!base.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, base));
  const loader = import.meta.resolve('tsx/esm/api');
  const script = new URL(`./${name}.ts`, base).href;
  return new Worker(
    `import(${JSON.stringify(loader)}).then(({ register }) => { register(); return import(${JSON.stringify(script)}); })`,
    { eval: true },
  );
}
