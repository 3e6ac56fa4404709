// The mocks' public surface (package.json "exports": "./mocks"): named exports only.
export { createStatelessHandlers, type StatelessHandlerOptions } from './stateless-handlers.ts';
export { createStatefulHandlers, type StatefulHandlerOptions, type StatefulMocks } from './stateful-handlers.ts';
export { createCatchAllHandler } from './catch-all.ts';
export type { ExampleChoice } from './example-selection.ts';
export { startPrismMocks, type PrismMocks, type PrismMocksOptions, type RunningMockRole } from './prism-mocks.ts';
export { MOCK_PORT_SHIFT } from './prism-plan.ts';
export { PRISM_DYNAMIC_DEVIATIONS, PRISM_DYNAMIC_SEED, PRISM_STATIC_DEVIATIONS, type PrismDeviation } from './prism-deviations.ts';
