// Written by `npm run generate` (src/generate/catalog.ts) from the OpenAPI documents of specs/: the file
// name, info.x-interface and info.title of each. Never edit it: add or change a spec and regenerate.

export const INTERFACES = [
  { name: "mapping", letter: "A", title: "Expedition mapping API" },
  { name: "topology", letter: "B", title: "Topology configuration API" },
  { name: "snapshots", letter: "C", title: "Portolan snapshot diagnostics API" },
  { name: "client-registration", letter: "D", title: "OAuth client self-registration" },
  { name: "rate-limit", letter: "E", title: "Access-token rate limiting" },
  { name: "device-config", letter: "F", title: "Device configuration REST and declarative deployment" },
  { name: "health", letter: "G", title: "Health endpoint convention" },
  { name: "access-session", letter: "H", title: "OAuth client session conventions" },
] as const;
