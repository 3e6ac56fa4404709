// The public surface of @portolan/mocks (scripts/build.ts compiles it to the package's dist/index.js): the
// stateless MSW handlers, which answer every operation of a spec from its named examples, and the catch-all.
// Only what runs without the reference system: the stateful handlers (which run the reference handlers
// in-process) and the Prism mocks stay in the full `portolan` package. msw is a peer dependency.
//
// @example
// import { setupServer } from 'msw/node';
// import { createStatelessHandlers, createCatchAllHandler } from '@portolan/mocks';
// const server = setupServer(...createStatelessHandlers('mapping', { baseUrl: 'http://charts.test' }), createCatchAllHandler());
// server.listen();
export { createCatchAllHandler } from '../../mocks/catch-all.ts';
export type { ExampleChoice } from '../../mocks/example-selection.ts';
export { createStatelessHandlers, type StatelessHandlerOptions } from '../../mocks/stateless-handlers.ts';
export { INTERFACES, type InterfaceName } from '../../src/lib/spec-catalog.ts';
