import type * as Sdk from '../../../generated/client-registration/sdk.gen.ts';
import type * as D from '../../../generated/client-registration/types.gen.ts';
import { type HandlerMap, type OperationHandlers, refusal, refuse, type TypedHandler } from '../../server/handler-types.ts';
import { REGISTRATION_HEADERS } from './error-shape.ts';
import { createRegistrationFlow, type RegistrationFlowDependencies } from './registration-flow.ts';
import { readRegistrationForm } from './registration-form.ts';

export type ClientRegistrationDependencies = RegistrationFlowDependencies;

/** Interface D: the form in, the flow's outcome out, every answer with the registration headers (failures: the error shape's). */
export function createClientRegistrationHandlers(deps: ClientRegistrationDependencies): HandlerMap {
  const register = createRegistrationFlow(deps);

  const registerClient: TypedHandler<D.RegisterClientData, D.RegisterClientResponses, D.RegisterClientErrors> = async (request) => {
    const read = readRegistrationForm(request.rawBody);
    if (!read.ok) return refuse('invalidRequest', read.problem);
    const outcome = await register(read.form, request.headers['user-agent']);
    if (!outcome.ok) return refusal(outcome.error);
    const { clientId, clientSecret } = outcome.value;
    return { status: 200, body: { client_id: clientId, client_secret: clientSecret }, headers: REGISTRATION_HEADERS };
  };

  // On the literal: a misspelt or unknown operationId is a type error here.
  return { registerClient } satisfies OperationHandlers<typeof Sdk>;
}
