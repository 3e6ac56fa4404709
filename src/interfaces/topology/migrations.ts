import type { Migration } from '../../stores/database.ts';

/**
 * The management system's records (versions 500-599): the objects a topology is built from, one row
 * per kind and name with its definition as JSON; which object uses which (for 409s and the delete
 * order); where each object is deployed (confirmed by the device, or maybe: migration 502); and the
 * deployment tasks.
 */
export const TOPOLOGY_MIGRATIONS: readonly Migration[] = [
  {
    version: 500,
    name: 'topologies, their objects, references, deployments and tasks',
    up: `CREATE TABLE topology_objects (
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  definition TEXT NOT NULL,
  created_by_task TEXT NOT NULL,
  created_at_ms BIGINT NOT NULL,
  PRIMARY KEY (kind, name)
);
CREATE TABLE topology_refs (
  from_kind TEXT NOT NULL,
  from_name TEXT NOT NULL,
  to_kind TEXT NOT NULL,
  to_name TEXT NOT NULL,
  via TEXT NOT NULL,
  PRIMARY KEY (from_kind, from_name, to_kind, to_name, via)
);
CREATE INDEX topology_refs_to ON topology_refs (to_kind, to_name);
CREATE TABLE topology_deployments (
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  device TEXT NOT NULL,
  PRIMARY KEY (kind, name, device)
);
CREATE TABLE topology_tasks (
  id TEXT PRIMARY KEY,
  topology_name TEXT NOT NULL,
  status TEXT NOT NULL,
  targets TEXT NOT NULL,
  created_objects TEXT NOT NULL,
  start_ms BIGINT NOT NULL,
  end_ms BIGINT,
  message TEXT
);
CREATE INDEX topology_tasks_topology ON topology_tasks (topology_name, start_ms);`,
  },
  {
    version: 501,
    name: 'objects being deleted',
    // Set while a delete removes an object from its devices: a create meanwhile does not reuse it.
    up: 'ALTER TABLE topology_objects ADD COLUMN deleting_since_ms BIGINT;',
  },
  {
    version: 502,
    name: 'deployments a device has not confirmed',
    // From now on topology_deployments holds only what a device confirmed. A task records here, per
    // task, each object it is about to send to a device, before the call (so a crash right after the
    // call still leaves a record a delete cleans up); the device's answer then confirms the row
    // (moved to topology_deployments) or drops it (nothing arrived). Rows whose answer was lost stay:
    // the object may be there. Keyed by task so one task's outcome never touches another's record.
    up: `CREATE TABLE topology_deploy_attempts (
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  device TEXT NOT NULL,
  task_id TEXT NOT NULL,
  PRIMARY KEY (kind, name, device, task_id)
);`,
  },
];
