// The collections rules can query with `each` (README.md, "Collections"): their names and fields.

export const DECLARATIONS_FILE = 'config/declarations.json';

/** The collections rules can query with `each`, where each comes from, and its fields (README.md, "Collections"). */
export const COLLECTIONS = {
  tenants: { source: DECLARATIONS_FILE, fields: ['name', 'applicationCount'] },
  applications: { source: DECLARATIONS_FILE, fields: ['tenant', 'name', 'template', 'serviceCount', 'poolCount'] },
  services: {
    source: DECLARATIONS_FILE,
    fields: ['tenant', 'application', 'name', 'class', 'virtualAddresses', 'virtualPort', 'pool', 'poolFound', 'tls', 'redirectOnly'],
  },
  pools: { source: DECLARATIONS_FILE, fields: ['tenant', 'application', 'name', 'memberCount', 'monitorCount', 'monitors'] },
  members: { source: DECLARATIONS_FILE, fields: ['tenant', 'application', 'pool', 'address', 'port'] },
  monitors: { source: DECLARATIONS_FILE, fields: ['tenant', 'application', 'name', 'monitorType', 'interval', 'timeout'] },
  listeners: { source: DECLARATIONS_FILE, fields: ['address', 'port', 'serviceCount', 'services'] },
  scripts: { source: 'config/rules/*.tcl', fields: ['partition', 'name', 'file', 'bytes', 'lines', 'blank', 'text'] },
  /** What reading the snapshot noted (a device archive without VERSION, a file cut short): read from no file. */
  notes: { source: undefined, fields: ['message'] },
} as const;
export type CollectionName = keyof typeof COLLECTIONS;

export const isCollection = (name: string): name is CollectionName => Object.hasOwn(COLLECTIONS, name);
export const collectionFields = (name: CollectionName): readonly string[] => ['id', ...COLLECTIONS[name].fields];
