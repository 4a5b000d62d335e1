import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import { cruise, type IReporterOutput } from 'dependency-cruiser';

const require = createRequire(import.meta.url);
const ruleSet = require(resolve('.dependency-cruiser.cjs')) as { forbidden: unknown[]; options: Record<string, unknown> };

async function violations(baseDir: string, dirs: string[]): Promise<string[]> {
  const out = (await cruise(dirs, {
    ...ruleSet.options,
    baseDir,
    validate: true,
    ruleSet: { forbidden: ruleSet.forbidden } as never,
    tsConfig: { fileName: resolve('tsconfig.json') },
  } as never)) as IReporterOutput;
  const summary = (out.output as { summary: { violations: { rule: { name: string }; from: string; to: string }[] } }).summary;
  return summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);
}

describe('architecture: layers point inward', function () {
  this.timeout(60_000);

  it('holds for the whole code base', async () => {
    expect(await violations(process.cwd(), ['domain', 'application', 'projections', 'infrastructure'])).to.deep.equal([]);
  });

  it('catches a domain file importing a framework, and application importing an adapter', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'layers-'));
    try {
      for (const d of ['domain', 'application', 'infrastructure', 'projections']) mkdirSync(join(dir, d));
      writeFileSync(join(dir, 'infrastructure/adapter.ts'), 'export const adapter = 1;\n');
      writeFileSync(join(dir, 'domain/bad.ts'), "import { EventEmitter } from 'node:events';\nexport const e = new EventEmitter();\n");
      writeFileSync(
        join(dir, 'application/bad.ts'),
        "import { adapter } from '../infrastructure/adapter.js';\nexport const x = adapter;\n",
      );
      writeFileSync(
        join(dir, 'projections/bad.ts'),
        "import { adapter } from '../infrastructure/adapter.js';\nexport const y = adapter;\n",
      );
      const found = await violations(dir, ['domain', 'application', 'projections', 'infrastructure']);
      expect(found.some((v) => v.startsWith('domain-is-pure: domain/bad.ts'))).to.equal(true);
      expect(found.some((v) => v.startsWith('application-sees-domain-only: application/bad.ts'))).to.equal(true);
      expect(found.some((v) => v.startsWith('projections-not-infrastructure: projections/bad.ts'))).to.equal(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('catches an import circle, also through type-only imports', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'layers-'));
    try {
      mkdirSync(join(dir, 'infrastructure'));
      writeFileSync(join(dir, 'infrastructure/list.ts'), "import { module } from './module.js';\nexport const list = [module];\n");
      writeFileSync(
        join(dir, 'infrastructure/module.ts'),
        "import type { list } from './list.js';\nexport const module = { n: 1 } as { n: number; all?: typeof list };\n",
      );
      const found = await violations(dir, ['infrastructure']);
      expect(found).to.include('no-circular: infrastructure/list.ts -> infrastructure/module.ts');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
