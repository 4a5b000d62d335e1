/**
 * The dependency rules (docs/architecture.md, "Layers"): layers point inward, and no module imports itself
 * through a circle. Checked by test/architecture/layers.spec.ts and `npm run lint:layers`.
 */
module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      comment: 'domain/ imports nothing outside domain/: no npm packages, no node built-ins, no other layer',
      severity: 'error',
      from: { path: '^domain/' },
      to: { pathNot: '^domain/' },
    },
    {
      name: 'application-sees-domain-only',
      comment: 'application/ imports domain/ and itself only: ports, not adapters; no framework or driver',
      severity: 'error',
      from: { path: '^application/' },
      to: { pathNot: '^(application|domain)/' },
    },
    {
      name: 'projections-not-infrastructure',
      comment: 'projections/ use domain event types, application ports and kysely; never infrastructure/ or the HTTP edge',
      severity: 'error',
      from: { path: '^projections/' },
      to: { path: '^(infrastructure|test)/' },
    },
    {
      name: 'projections-only-kysely',
      comment: 'the only packages projections/ may use are kysely and node built-ins',
      severity: 'error',
      from: { path: '^projections/' },
      to: { dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'], pathNot: 'node_modules/kysely/' },
    },
    {
      name: 'no-circular',
      comment:
        'no import circle: a capability registers by one line in infrastructure/capabilities/index.ts and nothing imports that list back',
      severity: 'error',
      from: { path: '^(domain|application|projections|infrastructure)/' },
      to: { circular: true },
    },
    {
      name: 'no-production-code-imports-tests',
      severity: 'error',
      from: { path: '^(domain|application|projections|infrastructure)/' },
      to: { path: '^test/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.json'],
    },
    exclude: { path: 'node_modules' },
  },
};
