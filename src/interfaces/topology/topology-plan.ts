import type { TopologyRequest } from '../../../generated/topology/types.gen.ts';

/** The kinds of object a topology is built from, as the management system stores them. */
export type ObjectKind = 'topology' | 'ssl' | 'policy' | 'chain' | 'service';
export type Definition = Record<string, unknown>;
/** Names one object (kind and name are its key). */
export type ObjectKey = { kind: ObjectKind; name: string };
export type ObjectDef = { kind: ObjectKind; name: string; definition: Definition };
/** `from` uses `to` (`via`: the rule of a policy that names a chain; '' otherwise). */
export type ObjectRef = { fromKind: ObjectKind; fromName: string; toKind: ObjectKind; toName: string; via: string };

/** How each kind is named in messages. */
export const KIND_LABEL: Readonly<Record<ObjectKind, string>> = {
  topology: 'Topology',
  ssl: 'SSL settings',
  policy: 'Security policy',
  chain: 'Service chain',
  service: 'Service',
};

/** Each object is one tenant on a device (spec: "What reaches the device"). */
const TENANT_PREFIX: Readonly<Record<ObjectKind, string>> = {
  topology: 'ssloT_',
  policy: 'ssloP_',
  chain: 'ssloC_',
  service: 'ssloS_',
  ssl: 'ssloL_',
};
const MEMBER_CLASS: Readonly<Record<ObjectKind, string>> = {
  topology: 'SSLO_Topology',
  policy: 'SSLO_Security_Policy',
  chain: 'SSLO_Service_Chain',
  service: 'SSLO_Service',
  ssl: 'SSLO_SSL_Settings',
};

export const tenantName = (kind: ObjectKind, name: string): string => `${TENANT_PREFIX[kind]}${name}`;

/** The values an SSL settings profile given only a name gets (spec: `SslSettingsDefaults`). */
export const SSL_SETTINGS_DEFAULTS = {
  generalSettings: { isForwardProxy: true, bypassHandshakeAlert: false, bypassClientCertFailure: false },
  clientSettings: {
    cipherString: 'DEFAULT',
    certKeyChain: [{ cert: '/Common/default.crt', key: '/Common/default.key' }],
    caCertKeyChain: [],
    alpn: false,
    logPublisher: '/Common/sys-ssl-publisher',
  },
  serverSettings: {
    cipherString: 'DEFAULT',
    caBundle: '/Common/ca-bundle.crt',
    expiredCertificates: 'drop',
    untrustedCertificates: 'drop',
    ocsp: '',
    crl: '',
  },
} as const;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** SSL settings as given, each default group filled in member by member where the client left it out. */
export function withSslDefaults(section: Definition): Definition {
  const out: Definition = structuredClone(section);
  for (const [group, defaults] of Object.entries(SSL_SETTINGS_DEFAULTS)) {
    const given = out[group];
    out[group] = isRecord(given) ? { ...structuredClone(defaults), ...given } : structuredClone(defaults);
  }
  return out;
}

/** JSON with keys sorted at every level: two definitions are the same when these are equal. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    isRecord(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, v[k]]),
        )
      : v,
  );
}

/**
 * The objects and references of a checked request (topologyCheck found no problem): the topology
 * (its TOPOLOGY section with the targets), its SSL settings with defaults, its security policy, every
 * chain and service of the template. Definitions keep every member the client sent.
 */
export function objectsOfRequest(request: TopologyRequest): { objects: ObjectDef[]; refs: ObjectRef[] } {
  const { template } = request;
  const topology = template.TOPOLOGY;
  const objects: ObjectDef[] = [
    { kind: 'ssl', name: template.SSL_SETTINGS.name, definition: withSslDefaults(template.SSL_SETTINGS) },
    ...Object.values(template.SERVICE).map(
      (service): ObjectDef => ({ kind: 'service', name: service.name, definition: structuredClone(service) }),
    ),
    ...Object.values(template.SERVICE_CHAIN).map(
      (chain): ObjectDef => ({ kind: 'chain', name: chain.name, definition: structuredClone(chain) }),
    ),
    { kind: 'policy', name: template.SECURITY_POLICY.name, definition: structuredClone(template.SECURITY_POLICY) },
    {
      kind: 'topology',
      name: topology.name,
      definition: { ...structuredClone(topology), targetList: structuredClone(request.targetList) },
    },
  ];
  const refs: ObjectRef[] = [
    { fromKind: 'topology', fromName: topology.name, toKind: 'ssl', toName: topology.sslSetting, via: '' },
    { fromKind: 'topology', fromName: topology.name, toKind: 'policy', toName: topology.securityPolicy, via: '' },
  ];
  for (const rule of template.SECURITY_POLICY.rules) {
    const chain = rule.actionOptions.serviceChain;
    if (chain !== undefined)
      refs.push({ fromKind: 'policy', fromName: template.SECURITY_POLICY.name, toKind: 'chain', toName: chain, via: rule.name });
  }
  for (const chain of Object.values(template.SERVICE_CHAIN)) {
    for (const entry of chain.orderedServiceList)
      refs.push({ fromKind: 'chain', fromName: chain.name, toKind: 'service', toName: entry.name, via: '' });
  }
  return { objects, refs };
}

/**
 * One object as a device tenant: an application `sslo` holding the object's definition as a member
 * of its own class (kept by the device as given), and for a service the pool of its load-balanced
 * devices (members on their ports, monitor `tcp`), which the device applies.
 */
export function tenantOf(object: ObjectDef): [string, Definition] {
  const members: Definition = {};
  if (object.kind === 'service') {
    const devices = (object.definition.customService as { loadBalancing: { devices: { ip: string; port: string }[] } }).loadBalancing
      .devices;
    members.pool = {
      class: 'Pool',
      monitors: ['tcp'],
      members: devices.map((d) => ({ servicePort: Number(d.port), serverAddresses: [d.ip] })),
    };
  }
  members.definition = { ...object.definition, class: MEMBER_CLASS[object.kind] };
  return [tenantName(object.kind, object.name), { class: 'Tenant', sslo: { class: 'Application', template: 'generic', ...members } }];
}
