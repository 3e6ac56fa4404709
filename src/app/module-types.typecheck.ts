// Checked by `tsc` in `npm test` (never run): each `@ts-expect-error` below must stay an error, so a
// loosened handler or module type (a Partial map, an `any` context, a hand-built error body) fails the
// typecheck. Remove a line's error and the directive itself becomes the error.
import type * as Sdk from '../../generated/mapping/sdk.gen.ts';
import type * as A from '../../generated/mapping/types.gen.ts';
import { MAPPING_MIGRATIONS } from '../interfaces/mapping/migrations.ts';
import { TOPOLOGY_SETTINGS } from '../interfaces/topology/settings.ts';
import { type OperationHandlers, refuse, type TypedHandler } from '../server/handler-types.ts';
import { defineModule } from '../server/interface-module.ts';

const answer = () => ({ status: 200 as const });

// A module's handlers cover its spec: an empty map, or one with an operation left out, does not compile.
// @ts-expect-error every operation needs a handler
export const none = {} satisfies OperationHandlers<typeof Sdk>;
// ...unless the module lists it as not implemented.
export const listed = {} satisfies OperationHandlers<
  typeof Sdk,
  | 'listEndpoints'
  | 'listCharts'
  | 'createChart'
  | 'getChart'
  | 'listVessels'
  | 'getVessel'
  | 'listHazards'
  | 'listJournalEntries'
  | 'listResources'
  | 'createResource'
>;
// A misspelt operationId is an excess property.
export const misspelt = {
  listEndpoints: answer,
  listCharts: answer,
  createChart: answer,
  getChart: answer,
  listVessels: answer,
  getVessel: answer,
  listHazards: answer,
  listJournalEntries: answer,
  listResources: answer,
  createResource: answer,
  // @ts-expect-error no such operation
  listChart: answer,
} satisfies OperationHandlers<typeof Sdk>;

// A handler's failure is a registry value with a status its spec declares for the operation.
export const found: TypedHandler<A.GetChartData, A.GetChartResponses, A.GetChartErrors> = () => refuse('objectNotFound');
// @ts-expect-error 409 is not among getChart's declared errors (400, 404, 500)
export const conflicting: TypedHandler<A.GetChartData, A.GetChartResponses, A.GetChartErrors> = () => refuse('objectExists');
// An error body built by hand: the 404 is not one of the responses the handler writes itself.
export const handBuilt: TypedHandler<A.GetChartData, A.GetChartResponses, A.GetChartErrors> = () =>
  // @ts-expect-error status 404 (and its body) belongs to the failure arm
  ({ status: 404, body: { status: 'error', message: 'no chart' } });

// A module's context is typed by its own settings (and those it says it reads).
export const typedContext = defineModule({
  name: 'mapping',
  settings: TOPOLOGY_SETTINGS,
  migrations: MAPPING_MIGRATIONS,
  errorShape: () => () => ({ status: 500 }),
  create: (context) => {
    const ownSetting: number = context.config.centralTokenTimeoutSeconds;
    const coreSetting: number = context.config.bodyLimitBytes;
    // @ts-expect-error a setting this module neither declares nor reads
    const misspeltSetting = context.config.centralTokenTimeoutSecond;
    // @ts-expect-error another module's setting, not declared in `reads`
    const undeclared = context.config.deviceHostname;
    return { ownSetting, coreSetting, misspeltSetting, undeclared } as never;
  },
});
