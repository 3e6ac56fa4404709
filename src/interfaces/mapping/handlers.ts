import type * as Sdk from '../../../generated/mapping/sdk.gen.ts';
import type * as A from '../../../generated/mapping/types.gen.ts';
import type { IdGenerator } from '../../lib/ids.ts';
import { type OperationHandlers, refuse, type TypedHandler } from '../../server/handler-types.ts';
import { toChart } from './charts.ts';
import type { MappingStore } from './store.ts';

export type MappingDependencies = { store: MappingStore; ids: IdGenerator; apiIndex: A.ApiIndex };

/** The spec's 404 for an unknown chart or vessel id (rendered `{status: "error", message}` by the error shape). */
const notFound = (what: string, id: string) => refuse('objectNotFound', `${what} '${id}' was not found.`);

/** Interface A: thin HTTP <-> domain handlers; requests arrive validated against specs/mapping.yaml. */
export function createMappingHandlers({ store, ids, apiIndex }: MappingDependencies) {
  const listEndpoints: TypedHandler<A.ListEndpointsData, A.ListEndpointsResponses> = () => ({ status: 200, body: apiIndex });

  const listCharts: TypedHandler<A.ListChartsData, A.ListChartsResponses, A.ListChartsErrors> = async () => {
    const data: Record<string, A.Chart> = {};
    for (const record of await store.listCharts()) data[record.id] = toChart(record);
    return { status: 200, body: { status: 'success', data } };
  };

  const createChart: TypedHandler<A.CreateChartData, A.CreateChartResponses, A.CreateChartErrors> = async ({ body }) => {
    const id = ids();
    await store.createChart({ ...body, id });
    return { status: 201, body: { status: 'success', message: 'Chart created successfully', id } };
  };

  const getChart: TypedHandler<A.GetChartData, A.GetChartResponses, A.GetChartErrors> = async ({ params }) => {
    const record = await store.getChart(params.chartId);
    return record ? { status: 200, body: { status: 'success', data: toChart(record) } } : notFound('Chart', params.chartId);
  };

  const listVessels: TypedHandler<A.ListVesselsData, A.ListVesselsResponses, A.ListVesselsErrors> = async () => {
    return { status: 200, body: { status: 'success', data: await store.listVesselSummaries() } };
  };

  const getVessel: TypedHandler<A.GetVesselData, A.GetVesselResponses, A.GetVesselErrors> = async ({ params }) => {
    const vessel = await store.getVessel(params.vesselId);
    return vessel ? { status: 200, body: { status: 'success', data: vessel } } : notFound('Vessel', params.vesselId);
  };

  const listHazards: TypedHandler<A.ListHazardsData, A.ListHazardsResponses, A.ListHazardsErrors> = async () => ({
    status: 200,
    body: { status: 'success', data: await store.listHazards() },
  });

  const listJournalEntries: TypedHandler<
    A.ListJournalEntriesData,
    A.ListJournalEntriesResponses,
    A.ListJournalEntriesErrors
  > = async () => ({
    status: 200,
    body: { status: 'success', data: await store.listJournalEntries() },
  });

  const listResources: TypedHandler<A.ListResourcesData, A.ListResourcesResponses, A.ListResourcesErrors> = async () => ({
    status: 200,
    body: { status: 'success', data: await store.listResources() },
  });

  const createResource: TypedHandler<A.CreateResourceData, A.CreateResourceResponses, A.CreateResourceErrors> = async ({ body }) => {
    const id = ids();
    await store.createResource({ ...body, id });
    return { status: 201, body: { status: 'success', message: 'Resource created successfully', id } };
  };

  // On the literal: a misspelt or unknown operationId is a type error here.
  return {
    listEndpoints,
    listCharts,
    createChart,
    getChart,
    listVessels,
    getVessel,
    listHazards,
    listJournalEntries,
    listResources,
    createResource,
  } satisfies OperationHandlers<typeof Sdk>;
}
