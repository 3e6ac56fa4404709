import type { AccessProfile, OauthClientApp, OauthProfileClientApp } from '../../../generated/device-config/types.gen.ts';
import { fullPath } from './device-errors.ts';
import type { ClientAppRecord, ObjectRef } from './oauth-store.ts';

/** The device answers with links to itself as `https://localhost/...?ver=<version>`, like the real product. */
const DEVICE_VERSION = '16.1.0';
const objectSegment = (partition: string, name: string) => `~${encodeURIComponent(partition)}~${encodeURIComponent(name)}`;
const selfLink = (path: string) => `https://localhost/mgmt/tm/${path}?ver=${DEVICE_VERSION}`;

/** A client application on the wire; the secret only when it was just made (the create call). */
export function toOauthClientApp(app: ClientAppRecord, clientSecret: string): OauthClientApp {
  const { partition, name, generation, ...settings } = app;
  return {
    kind: 'tm:access:oauth:oauth-client-app:oauth-client-appstate',
    name,
    partition,
    fullPath: fullPath(partition, name),
    generation,
    selfLink: selfLink(`access/oauth/oauth-client-app/${objectSegment(partition, name)}`),
    ...settings,
    clientSecret,
  };
}

export function toBinding(profile: { partition: string; name: string }, binding: ObjectRef): OauthProfileClientApp {
  return {
    kind: 'tm:access:profile:oauth:client-apps:client-appsstate',
    name: binding.name,
    partition: binding.partition,
    fullPath: fullPath(binding.partition, binding.name),
    generation: binding.generation,
    selfLink: selfLink(
      `access/profile/oauth/${objectSegment(profile.partition, profile.name)}/client-apps/${objectSegment(binding.partition, binding.name)}`,
    ),
  };
}

export function toAccessProfile(profile: ObjectRef): AccessProfile {
  return {
    kind: 'tm:access:profile:access:accessstate',
    name: profile.name,
    partition: profile.partition,
    fullPath: fullPath(profile.partition, profile.name),
    generation: profile.generation,
    selfLink: selfLink(`access/profile/access/${objectSegment(profile.partition, profile.name)}`),
    modifiedSinceLastPolicySync: 'false',
  };
}
