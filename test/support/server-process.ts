import { type ChildProcess, spawn } from 'node:child_process';
import { startArgs } from '../../infrastructure/start-args.js';

/**
 * `npm start`'s entry point in a child process with the given environment: resolves with the base URL it
 * prints (and everything it printed so far) once it listens; rejects if it exits or takes over 60 s.
 */
export function startServerProcess(
  env: NodeJS.ProcessEnv,
  ready = (out: string) => out.includes('API docs'),
): Promise<{ child: ChildProcess; base: string; out: string }> {
  const child = spawn(process.execPath, startArgs(), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 60_000);
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m && ready(out)) {
        clearTimeout(t);
        resolve({ child, base: m[1]!, out });
      }
    });
    child.stderr!.on('data', (b: Buffer) => {
      out += b.toString();
    });
    child.on('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`server exited with ${code}:\n${out}`));
    });
  });
}

/** A `ROLE=worker` process (it serves no HTTP): resolves once it says it runs. */
export function startWorkerProcess(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; out: string }> {
  const child = spawn(process.execPath, startArgs(), {
    env: { ...env, ROLE: 'worker' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`worker did not start:\n${out}`)), 60_000);
    const seen = (b: Buffer) => {
      out += b.toString();
      if (out.includes('worker running')) {
        clearTimeout(t);
        resolve({ child, out });
      }
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', (b: Buffer) => {
      out += b.toString();
    });
    child.on('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`worker exited with ${code}:\n${out}`));
    });
  });
}
