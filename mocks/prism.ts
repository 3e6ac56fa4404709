// The Prism part of the mocks' public surface (package.json "exports": "./mocks/prism"): named exports only,
// and nothing here reaches msw, so the Prism mocks work without it installed. mocks/index.ts re-exports it.
export { startPrismMocks, type PrismMocks, type PrismMocksOptions, type RunningMockRole } from './prism-mocks.ts';
export { MOCK_PORT_SHIFT } from './prism-plan.ts';
export { PRISM_DYNAMIC_DEVIATIONS, PRISM_DYNAMIC_SEED, PRISM_STATIC_DEVIATIONS, type PrismDeviation } from './prism-deviations.ts';
