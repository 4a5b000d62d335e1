import { createHash } from 'node:crypto';
import { extname } from 'node:path';
import { build } from 'esbuild';
import { projectPath } from '../project-root.js';

/** One file of the console as served: its bytes, content type and a strong ETag. */
export type ConsoleFile = Readonly<{ body: Buffer; type: string; etag: string }>;
/** The console's files by the name they are served under (`index.html`, `app-<hash>.js`, `app-<hash>.css`). */
export type ConsoleBundle = ReadonlyMap<string, ConsoleFile>;

/** The browser code's entry point (docs/console.md). */
export const CONSOLE_ENTRY = projectPath('infrastructure', 'console', 'web', 'main.tsx');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
};

const file = (body: Buffer, name: string): ConsoleFile => ({
  body,
  type: TYPES[extname(name)] ?? 'application/octet-stream',
  etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
});

const page = (script: string, style: string | null) =>
  `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Agent platform console</title>
  <link rel="icon" href="/favicon.ico">
  ${style ? `<link rel="stylesheet" href="/console/${style}">` : ''}
</head>
<body>
  <div id="app"></div>
  <script type="module" src="/console/${script}"></script>
</body>
</html>
`;

/**
 * Bundles the console with esbuild, in memory: TypeScript and JSX (Preact), uPlot and the styles become one
 * minified script and one style sheet named by their content hash, plus the page that loads them. Nothing is
 * written to disk, so the console needs no build step of its own (docs/console.md), and no generated file can be
 * committed by mistake.
 */
export async function buildConsole(): Promise<ConsoleBundle> {
  const r = await build({
    entryPoints: { app: CONSOLE_ENTRY },
    bundle: true,
    write: false,
    outdir: 'console',
    entryNames: '[name]-[hash]',
    format: 'esm',
    target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
    platform: 'browser',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const files = new Map<string, ConsoleFile>();
  let script: string | null = null;
  let style: string | null = null;
  for (const out of r.outputFiles) {
    const name = out.path.split(/[\\/]/).pop() as string;
    files.set(name, file(Buffer.from(out.contents), name));
    if (name.endsWith('.js')) script = name;
    if (name.endsWith('.css')) style = name;
  }
  if (!script) throw new Error('the console bundle has no script');
  files.set('index.html', file(Buffer.from(page(script, style)), 'index.html'));
  return files;
}
