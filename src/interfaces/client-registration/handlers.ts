import type { OperationHandlers } from '../../server/handler-types.ts';
import type * as Sdk from '../../../generated/client-registration/sdk.gen.ts';
import type * as D from '../../../generated/client-registration/types.gen.ts';
import type { HandlerMap, TypedHandler } from '../../server/handler-types.ts';
import { REGISTRATION_HEADERS, registrationFailure } from './error-shape.ts';
import { createRegistrationFlow, type RegistrationFlowDependencies } from './registration-flow.ts';
import { readRegistrationForm } from './registration-form.ts';

export type ClientRegistrationDependencies = RegistrationFlowDependencies;

/** Interface D: the form in, the flow's outcome out, every answer with the registration headers. */
export function createClientRegistrationHandlers(deps: ClientRegistrationDependencies): HandlerMap {
  const register = createRegistrationFlow(deps);

  const registerClient: TypedHandler<D.RegisterClientData, D.RegisterClientResponses & D.RegisterClientErrors> = async (request) => {
    const read = readRegistrationForm(request.rawBody);
    if (!read.ok) return registrationFailure(400, 'invalid request', read.problem);
    const outcome = await register(read.form, request.headers['user-agent']);
    if (!outcome.ok) return registrationFailure(403, outcome.error, outcome.message);
    return { status: 200, body: { client_id: outcome.clientId, client_secret: outcome.clientSecret }, headers: REGISTRATION_HEADERS };
  };

  // On the literal: a misspelt or unknown operationId is a type error here.
  return { registerClient } satisfies OperationHandlers<typeof Sdk>;
}
