// Import direction rules (`npm run lint:imports`; `scripts/import-rules.test.ts` runs them in `npm test`).
// Dependencies point one way: app -> server (the HTTP adapter) -> interfaces (handlers -> pure domain ->
// store ports); app -> gateway (a role whose stages run on the adapter) -> traffic (the proxy engine);
// lib/ underneath everything (../shared/DESIGN.md, "Layout"; src/ARCHITECTURE.md). Paths are relative to
// the directory depcruise runs in, so the same rules also run on the fixture tree of the test.
import { fileURLToPath } from 'node:url';

/**
 * What HTTP looks like from domain code: the node:http family (core modules resolve to their bare
 * name) and the HTTP frameworks we use (npm packages resolve to their path under node_modules/).
 */
const HTTP_MODULES = ['^(node:)?(http|https|http2)$', '(^|/)node_modules/(openapi-backend|find-my-way)/'];

/**
 * Files under src/interfaces/ that are not domain code: the HTTP <-> domain layer (handlers.ts and
 * <part>-handlers.ts, module.ts, and error-shape.ts, the interface's error wire shape), tests, their fixtures and helpers
 * (test-*.ts, *-test-helpers.ts, test-helpers/).
 */
const INTERFACE_EDGE = [
  '(^|/)handlers\\.ts$',
  '-handlers\\.ts$',
  '(^|/)module\\.ts$',
  '(^|/)error-shape\\.ts$',
  '\\.test\\.ts$',
  '/fixtures/',
  '(^|/)test-[^/]*\\.ts$',
  '-test-helpers?\\.ts$',
  '/test-helpers?/',
];

/** Tests of traffic and gateway code, their fixtures, helpers and harnesses: they may start the whole system. */
const TRAFFIC_TEST_FILES = ['\\.test\\.ts$', '/fixtures/', '(^|/)test-[^/]*\\.ts$', '-harness\\.ts$'];

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A cycle in src/ means two modules cannot be understood, tested or replaced one without the other.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'server-imports-no-interface',
      comment:
        'src/server/ is the one HTTP adapter: it serves whatever modules the composition root (src/app/) hands it, ' +
        'so it imports no interface, not the composition root, not the gateway role (src/gateway/) and not the ' +
        'traffic machinery (src/traffic/), which the composition root wires in.',
      severity: 'error',
      // Its tests run it inside the whole system (src/app/test-system.ts), as a user would.
      from: { path: '^src/server/', pathNot: '\\.test\\.ts$' },
      to: { path: '^src/(interfaces|app|gateway|traffic)/' },
    },
    {
      name: 'domain-imports-no-http',
      comment:
        'Domain code under src/interfaces/ knows nothing of HTTP: no node:http/https/http2, openapi-backend, ' +
        'find-my-way or src/server/. Only handlers.ts and module.ts (and tests, fixtures, test helpers) sit on the HTTP side.',
      severity: 'error',
      from: { path: '^src/interfaces/', pathNot: INTERFACE_EDGE },
      to: { path: [...HTTP_MODULES, '^src/server/'] },
    },
    {
      name: 'traffic-imports-no-adapter',
      comment:
        "src/traffic/ (pools, the health monitor, the proxy, the device's virtual servers) is traffic machinery: it " +
        'answers nothing through the HTTP adapter, so it imports neither the adapter nor the composition root (tests aside).',
      severity: 'error',
      // src/gateway/ is not held by it: the gateway's stages run on the adapter (gateway-imports-no-root below).
      from: { path: '^src/traffic/', pathNot: TRAFFIC_TEST_FILES },
      to: { path: '^src/(server|app)/' },
    },
    {
      name: 'gateway-imports-no-root',
      comment:
        "src/gateway/ is the gateway role: its stages run on the one HTTP adapter, so it may import the adapter's " +
        'stage contract and request helpers (src/server/stages.ts, role-app types, body-policy, request-parsing); it ' +
        'builds no server (src/server/http-adapter.ts) and does not reach into the composition root (src/app/), which ' +
        'wires it (tests aside).',
      severity: 'error',
      from: { path: '^src/gateway/', pathNot: TRAFFIC_TEST_FILES },
      to: { path: ['^src/app/', '^src/server/http-adapter\\.ts$'] },
    },
    {
      name: 'traffic-imports-no-role',
      comment:
        "src/traffic/ is shared by the gateway and the device's deployed services, so it knows neither: it imports " +
        'nothing from src/gateway/ or src/interfaces/ (tests aside); they import it.',
      severity: 'error',
      from: { path: '^src/traffic/', pathNot: TRAFFIC_TEST_FILES },
      to: { path: '^src/(gateway|interfaces)/' },
    },
    {
      name: 'src-imports-no-scripts',
      comment:
        'scripts/ holds the build, benchmark and maintenance scripts that use src/; nothing in src/ (the package, its ' +
        'tests included) imports them: what both need lives in src/ (e.g. src/lib/load-generator.ts).',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^scripts/' },
    },
    {
      name: 'lib-imports-nothing-above',
      comment:
        'src/lib/ is underneath everything: errors, config, clock, ids, logger, the one HTTP answer writer. It imports ' +
        'no layer above it.',
      severity: 'error',
      from: { path: '^src/lib/' },
      to: { path: '^src/(interfaces|server|app|gateway|traffic)/' },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules', '^generated/'] },
    // Type-only imports count: a domain file importing a type from src/server/ still depends on the adapter.
    tsPreCompilationDeps: true,
    // The tsconfig allows `.ts` extensions in imports (allowImportingTsExtensions); resolve with it.
    tsConfig: { fileName: fileURLToPath(new URL('./tsconfig.json', import.meta.url)) },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.mts', '.js', '.mjs', '.cjs', '.json', '.d.ts'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
