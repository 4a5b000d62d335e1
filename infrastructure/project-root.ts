import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The project's root folder: the parent of this module's folder, which is `infrastructure/` in the sources and
 * `dist/` in the server's build (docs/operations.md#the-build), so files the server reads at run time (the console's
 * and the web call's browser code, package.json) are found the same from either.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A file of the project by its path from the root. */
export const projectPath = (...parts: string[]): string => join(ROOT, ...parts);
