// The mocks' public surface (package.json "exports": "./mocks"): named exports only; the MSW handlers need msw.
export { createStatelessHandlers, type StatelessHandlerOptions } from './stateless-handlers.ts';
export { createStatefulHandlers, type StatefulHandlerOptions, type StatefulMocks } from './stateful-handlers.ts';
export { createCatchAllHandler } from './catch-all.ts';
export type { ExampleChoice } from './example-selection.ts';
// The Prism mocks (also "./mocks/prism", which needs no msw).
export * from './prism.ts';
