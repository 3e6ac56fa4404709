import { type OperationHandlers, refusal, type TypedHandler } from '../../server/handler-types.ts';
import type * as Sdk from '../../../generated/device-config/sdk.gen.ts';
import { randomBytes } from 'node:crypto';
import type * as F from '../../../generated/device-config/types.gen.ts';
import { alreadyExists, deviceFailure, fullPath, notFound, unknownReference } from './device-errors.ts';
import { toAccessProfile, toBinding, toOauthClientApp } from './oauth-objects.ts';
import type { DeviceOauthStore } from './oauth-store.ts';

export type ClientCredentialsGenerator = () => { clientId: string; clientSecret: string };

export type DeviceConfigDependencies = {
  store: DeviceOauthStore;
  /** Makes a new application's client id and secret (default: 192 and 256 random bits, hex). */
  newClientCredentials?: ClientCredentialsGenerator;
};

const randomClientCredentials: ClientCredentialsGenerator = () => ({
  clientId: randomBytes(24).toString('hex'),
  clientSecret: randomBytes(32).toString('hex'),
});

/** Applications are created in the partition `Common` (the request schema has no partition). */
const PARTITION = 'Common';

/**
 * Interface F, the OAuth objects client registration (D) calls: create and delete a client
 * application, bind it to an OAuth profile, re-apply an access policy. The other device operations
 * answer 501 until their issue lands. Requests arrive authenticated (the spec's `basicAuth`).
 */
export function createDeviceConfigHandlers(deps: DeviceConfigDependencies) {
  const newCredentials = deps.newClientCredentials ?? randomClientCredentials;

  const createOauthClientApp: TypedHandler<
    F.CreateOauthClientAppData,
    F.CreateOauthClientAppResponses,
    F.CreateOauthClientAppErrors
  > = async ({ body }) => {
    const { clientId, clientSecret } = newCredentials();
    const created = await deps.store.createClientApp({
      partition: PARTITION,
      name: body.name,
      appName: body.appName,
      authType: 'secret',
      clientId,
      clientSecret,
      ...(body.scopes === undefined ? {} : { scopes: body.scopes }),
      // The real product's defaults for what was not sent (REAL-PRODUCTS.md D).
      grantPassword: body.grantPassword ?? 'disabled',
      grantCode: body.grantCode ?? 'disabled',
      grantToken: body.grantToken ?? 'disabled',
      generateRefreshToken: body.generateRefreshToken ?? 'true',
      accessTokenLifetime: body.accessTokenLifetime ?? 5,
      authCodeLifetime: body.authCodeLifetime ?? 5,
      refreshTokenLifetime: body.refreshTokenLifetime ?? 480,
      refreshTokenUsageLimit: body.refreshTokenUsageLimit ?? 64,
    });
    if (!created.ok) return refusal(alreadyExists('OAuth client app', PARTITION, body.name));
    return { status: 200, body: toOauthClientApp(created.app, clientSecret) };
  };

  const deleteOauthClientApp: TypedHandler<
    F.DeleteOauthClientAppData,
    F.DeleteOauthClientAppResponses,
    F.DeleteOauthClientAppErrors
  > = async ({ params }) => {
    if (!(await deps.store.deleteClientApp(params.partition, params.appName)))
      return refusal(notFound('OAuth client app', params.partition, params.appName));
    return { status: 200, body: undefined };
  };

  const bindOauthClientApp: TypedHandler<F.BindOauthClientAppData, F.BindOauthClientAppResponses, F.BindOauthClientAppErrors> = async ({
    params,
    body,
  }) => {
    const { partition, oauthProfile } = params;
    const outcome = await deps.store.bindClientApp(partition, oauthProfile, body.name);
    if (outcome.ok) return { status: 200, body: toBinding({ partition, name: oauthProfile }, outcome.binding) };
    switch (outcome.error) {
      case 'profile-not-found':
        return refusal(notFound('OAuth profile', partition, oauthProfile));
      case 'app-not-found':
        // The body names something that does not exist: a bad request, not a missing resource.
        return refusal(unknownReference('OAuth client app', partition, body.name));
      case 'already-bound':
        return refusal(
          deviceFailure(
            'objectExists',
            `01020066:3: The requested client app (${fullPath(partition, body.name)}) already exists in OAuth profile (${fullPath(partition, oauthProfile)}).`,
          ),
        );
    }
  };

  const applyAccessPolicy: TypedHandler<F.ApplyAccessPolicyData, F.ApplyAccessPolicyResponses, F.ApplyAccessPolicyErrors> = async ({
    params,
  }) => {
    const applied = await deps.store.applyAccessPolicy(params.partition, params.policyName);
    if (!applied) return refusal(notFound('access profile', params.partition, params.policyName));
    return { status: 200, body: toAccessProfile(applied) };
  };

  // On the literal: a misspelt or unknown operationId is a type error here.
  return { createOauthClientApp, deleteOauthClientApp, bindOauthClientApp, applyAccessPolicy } satisfies Partial<
    OperationHandlers<typeof Sdk>
  >;
}
