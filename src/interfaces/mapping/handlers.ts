import type * as Sdk from '../../../generated/mapping/sdk.gen.ts';
import type * as A from '../../../generated/mapping/types.gen.ts';
import type { IdGenerator } from '../../lib/ids.ts';
import { type OperationHandlers, refuse, type TypedHandler } from '../../server/handler-types.ts';
import { lastingBody } from '../../server/lasting-body.ts';
import { toChart } from './charts.ts';
import type { Kept, MappingStore } from './store.ts';

export type MappingDependencies = { store: MappingStore; ids: IdGenerator; apiIndex: A.ApiIndex };

/** The spec's 404 for an unknown chart or vessel id (rendered `{status: "error", message}` by the error shape). */
const notFound = (what: string, id: string) => refuse('objectNotFound', `${what} '${id}' was not found.`);

/**
 * The success answer about survey records (vessels, hazards, the journal), which no operation changes: built
 * and serialised once per list or record the store keeps (lasting-body.ts), the same bytes every time after.
 */
function surveyAnswers() {
  const answers = new WeakMap<object, object>();
  return <T extends object>(data: T): { status: 'success'; data: T } => {
    let answer = answers.get(data) as { status: 'success'; data: T } | undefined;
    if (answer === undefined) {
      answer = lastingBody({ status: 'success' as const, data });
      answers.set(data, answer);
    }
    return answer;
  };
}

/** `answer` of a kept value: at once when the store has it at hand, else once it is read. */
const whenKept = <T, R>(value: Kept<T>, answer: (value: T) => R): R | Promise<R> =>
  value instanceof Promise ? value.then(answer) : answer(value);

/** Interface A: thin HTTP <-> domain handlers; requests arrive validated against specs/mapping.yaml. */
export function createMappingHandlers({ store, ids, apiIndex }: MappingDependencies) {
  const survey = surveyAnswers();
  const index = lastingBody(apiIndex);
  const listEndpoints: TypedHandler<A.ListEndpointsData, A.ListEndpointsResponses> = () => ({ status: 200, body: index });

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

  // The survey's records are at hand once read: these answer without waiting (no promise, no microtask turn).
  const listVessels: TypedHandler<A.ListVesselsData, A.ListVesselsResponses, A.ListVesselsErrors> = () =>
    whenKept(store.listVesselSummaries(), (data) => ({ status: 200 as const, body: survey(data) }));

  const getVessel: TypedHandler<A.GetVesselData, A.GetVesselResponses, A.GetVesselErrors> = ({ params }) =>
    whenKept(store.getVessel(params.vesselId), (vessel) =>
      vessel ? { status: 200 as const, body: survey(vessel) } : notFound('Vessel', params.vesselId),
    );

  const listHazards: TypedHandler<A.ListHazardsData, A.ListHazardsResponses, A.ListHazardsErrors> = () =>
    whenKept(store.listHazards(), (data) => ({ status: 200 as const, body: survey(data) }));

  const listJournalEntries: TypedHandler<A.ListJournalEntriesData, A.ListJournalEntriesResponses, A.ListJournalEntriesErrors> = () =>
    whenKept(store.listJournalEntries(), (data) => ({ status: 200 as const, body: survey(data) }));

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
